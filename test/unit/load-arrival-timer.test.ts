import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// Artillery's arrival processes, resolved as Artillery resolves them (from load/), after the preload
// that runArtillery gives Artillery's threads.
const loadRequire = createRequire(join(__dirname, '..', '..', 'load', 'package.json'));
loadRequire('./arrival-timer.cjs');
const arrivals = loadRequire('arrivals') as {
  uniform: {
    process(tickIntervalMs: number, durationMs: number): EventEmitter & { start(): unknown; stop(): unknown };
  };
};

/** Runs a uniform arrival process to its end; resolves with each arrival's time since the start, ms. */
function arrivalTimes(tickIntervalMs: number, durationMs: number, onArrival?: (n: number) => void) {
  return new Promise<number[]>((resolve) => {
    const times: number[] = [];
    const process = arrivals.uniform.process(tickIntervalMs, durationMs);
    const start = performance.now();
    process.on('arrival', () => {
      times.push(performance.now() - start);
      onArrival?.(times.length);
    });
    process.on('finished', () => resolve(times));
    process.start();
  });
}

describe('load: Artillery arrivals timed without spinning', () => {
  test('a phase gets exactly its arrivals, none before its tick', async () => {
    const times = await arrivalTimes(10, 200);
    expect(times).toHaveLength(20);
    // Tick k is due k intervals after the start (timers may fire a fraction of a millisecond early).
    times.forEach((t, k) => {
      expect(t).toBeGreaterThanOrEqual((k + 1) * 10 - 1);
    });
  });

  test('the event loop is not spun between ticks', async () => {
    // nanotimer's own setInterval re-queues itself with setImmediate until each tick is due.
    const realSetImmediate = global.setImmediate;
    let immediates = 0;
    const counting = ((...args: Parameters<typeof setImmediate>) => {
      immediates++;
      return realSetImmediate(...args);
    }) as typeof setImmediate;
    global.setImmediate = counting;
    try {
      await arrivalTimes(30, 150);
    } finally {
      global.setImmediate = realSetImmediate;
    }
    expect(immediates).toBe(0);
  });

  test('ticks made late by a busy loop all run as soon as it frees', async () => {
    // Arrivals that come in the same macrotask as the first one, right after its busy loop returns,
    // are told apart by a microtask queued in it: microtasks run only once that macrotask is over.
    let sameTurn = false;
    let ranTogether = 0;
    const times = await arrivalTimes(5, 100, (n) => {
      if (n === 1) {
        const until = performance.now() + 40;
        while (performance.now() < until);
        sameTurn = true;
        queueMicrotask(() => {
          sameTurn = false;
        });
      } else if (sameTurn) ranTogether++;
    });
    expect(times).toHaveLength(20);
    // Ticks 2 to 9 were due (tick k at 5k ms) before the loop, begun at 5 ms at the earliest, freed at
    // 45 ms: all eight come together right after it, not one per timer turn.
    expect(ranTogether).toBeGreaterThanOrEqual(8);
  });

  test('a stopped process makes no more arrivals', async () => {
    const process = arrivals.uniform.process(5, 1000);
    let count = 0;
    process.on('arrival', () => {
      if (++count === 3) process.stop();
    });
    const finished = new Promise((resolve) => process.on('finished', resolve));
    process.start();
    await finished;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(count).toBe(3);
  });
});
