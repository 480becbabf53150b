// Preloaded into Artillery's threads (`--require`, see runArtillery in artillery.ts). Artillery times
// a phase's arrivals with the `arrivals` package, whose timer (nanotimer) spins on setImmediate through
// the last 25 ms before every tick, and all the time when ticks are 25 ms apart or less: at 25
// arrivals/s the driver burned about 0.6 of a core doing nothing, and a whole core from 40/s, taken
// from the platform it measures on the same two cores. This replaces nanotimer's setInterval (the only
// call the uniform arrivals make; Artillery uses no other) with timers at the same absolute ticks:
// tick k is due k intervals after the start, so the rate stays exact, and a tick late by a timer's
// granularity (about a millisecond) or a busy loop is run at once, as nanotimer runs a late one.
'use strict';

const { dirname } = require('node:path');

const arrivalsDir = dirname(require.resolve('arrivals/package.json', { paths: [__dirname] }));
const NanoTimer = require(require.resolve('nanotimer', { paths: [arrivalsDir] }));
const { version } = require(require.resolve('nanotimer/package.json', { paths: [arrivalsDir] }));
// The functions replaced below are this version's; another may have changed what they do.
if (version !== '0.3.14')
  throw new Error(`load/arrival-timer.cjs was written for nanotimer 0.3.14, found ${version}`);

const UNITS_IN_NS = { s: 1e9, m: 1e6, u: 1e3, n: 1 };

NanoTimer.prototype.setInterval = function setInterval(task, args, interval, callback) {
  const unit = UNITS_IN_NS[interval.at(-1)];
  const intervalNs = Number(interval.slice(0, -1)) * unit;
  if (typeof task !== 'function' || !(intervalNs > 0))
    throw new Error(`arrival timer: a task and a positive interval are needed, got ${interval}`);
  this.intervalCallbackRef = callback;
  const start = process.hrtime.bigint();
  const elapsedNs = () => Number(process.hrtime.bigint() - start);
  let due = 1;
  const state = { running: true, timeout: undefined };
  this.arrivalTimer = state;
  const tick = () => {
    while (state.running && elapsedNs() >= due * intervalNs) {
      due++;
      if (args) task.apply(null, args);
      else task();
    }
    if (state.running) state.timeout = setTimeout(tick, (due * intervalNs - elapsedNs()) / 1e6);
  };
  state.timeout = setTimeout(tick, intervalNs / 1e6);
};

NanoTimer.prototype.clearInterval = function clearInterval() {
  const state = this.arrivalTimer;
  if (state) {
    state.running = false;
    clearTimeout(state.timeout);
  }
  if (this.intervalCallbackRef) this.intervalCallbackRef();
};
