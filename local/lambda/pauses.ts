/**
 * An invocation's pauses (it waits on a timer, with no work to do), and the
 * room a sandbox paused long enough lends to the invocations waiting.
 */
import { fillAll } from './pool-growth';
import { maxSandboxes, type Pool, type RuntimeState, sandboxCount } from './pools';
import type { Sandbox } from './sandbox';

/**
 * Sandboxes that may run beyond the caps, in the room of sandboxes whose
 * invocation is paused (a `POST /orders` with `Prefer: wait=N` waiting for
 * its saga; on Lambda each would hold an environment of its own). Measured
 * here, 8 concurrent `wait=5` orders whose sagas took 3 s: without lending,
 * 2 of them ended `201` and a GET sent meanwhile waited 5.2 s; with 4 lent,
 * 6 ended `201` and the GET took 1.7 s (see the README). Each lent sandbox
 * costs 25–50 MB while it lives (it is stopped as soon as it is free and its
 * function is over its cap).
 */
export const DEFAULT_MAX_LENT_SANDBOXES = 4;
/**
 * A paused sandbox lends its room only once paused this long: a sandbox
 * started in it costs a cold start (0.5–1 s of CPU here), more than most
 * waits last (a saga ends within 62 ms at p90 here, uncontended), and then
 * sits idle. Lending serves the long waits: sagas slowed by load or faults.
 */
const LEND_AFTER_PAUSED_MS = 250;

/** How many of `pool`'s sandboxes lend their room: paused for LEND_AFTER_PAUSED_MS at least. */
export function lentRoom(pool: Pool): number {
  if (pool.paused === 0) return 0;
  const before = performance.now() - LEND_AFTER_PAUSED_MS;
  let n = 0;
  for (const s of pool.sandboxes) if (s.paused && s.waitingSince <= before) n++;
  return n;
}

/** Sandboxes that count against the total cap: all but those that lend their room. */
export function workingCount(runtime: RuntimeState) {
  let n = 0;
  for (const pool of runtime.pools.values()) n += pool.sandboxes.size - lentRoom(pool);
  return n;
}

/** Whether another sandbox may start, lent room included: never more than the caps plus the lent ones. */
export function belowCeiling(runtime: RuntimeState) {
  return (
    sandboxCount(runtime) <
    maxSandboxes(runtime) + (runtime.options.maxLentSandboxes ?? DEFAULT_MAX_LENT_SANDBOXES)
  );
}

/**
 * Marks a sandbox's invocation paused or resumed. A pause that lasts lends
 * the sandbox's room (see lentRoom) to the invocations waiting, whichever
 * function they are for: each gets a sandbox of its own, as on Lambda,
 * never a share of the paused one (one invocation per sandbox).
 */
export function setPaused(runtime: RuntimeState, sandbox: Sandbox, paused: boolean) {
  if (sandbox.paused === paused) return;
  sandbox.paused = paused;
  const { pool } = sandbox;
  pool.paused += paused ? 1 : -1;
  const now = performance.now();
  if (!paused) {
    sandbox.pausedMs += now - sandbox.pausedAt;
    return;
  }
  sandbox.pausedAt = now;
  if (sandbox.waitingSince === 0) sandbox.waitingSince = now;
  pool.stats.pauses++;
  pool.stats.mostPaused = Math.max(pool.stats.mostPaused, pool.paused);
  const onPause = sandbox.onPause;
  sandbox.onPause = undefined;
  onPause?.();
  const lend = () => {
    if (sandbox.paused && !runtime.stopped) fillAll(runtime);
  };
  const lendsInMs = sandbox.waitingSince + LEND_AFTER_PAUSED_MS - now;
  if (lendsInMs <= 0) return lend();
  setTimeout(lend, lendsInMs + 1).unref();
}

/** The invocation a sandbox ran has ended: whatever it paused or asked to be told is over. */
export function endTurn(runtime: RuntimeState, sandbox: Sandbox) {
  setPaused(runtime, sandbox, false);
  sandbox.onPause = undefined;
  sandbox.waitingSince = 0;
}
