/**
 * The runtime's pools: one per function, the sandboxes it has and the
 * invocations waiting for one, sized by the caps below; a sandbox that
 * frees is given to the next waiting invocation or kept idle, and idle ones
 * are reclaimed after a while. How a pool grows is in pool-growth.ts.
 */
import type { Waiter } from './admission';
import type { FunctionSpec } from './function-spec';
import { handOver, promote, takeBackFor } from './hand-over';
import { type InvocationRecord, newPoolStats, type PoolStats } from './metering';
import { endTurn, workingCount } from './pauses';
import { fill, fillAll } from './pool-growth';
import { RecentDuration } from './recent-duration';
import { type Sandbox, stopSandbox } from './sandbox';

export interface LambdaRuntimeOptions {
  /** Print function output on this process's output instead of the per-function log files. */
  readonly echoLogs?: boolean;
  /** Sandboxes per function at most, for functions without reserved concurrency. */
  readonly maxSandboxesPerFunction?: number;
  /** Sandboxes of all functions at most (each sandbox costs memory: see DEFAULT_MAX_SANDBOXES). */
  readonly maxSandboxes?: number;
  /** Sandboxes beyond the caps at most, started in the room of paused ones (see DEFAULT_MAX_LENT_SANDBOXES). */
  readonly maxLentSandboxes?: number;
  /** An idle sandbox beyond a function's first is stopped after this long. */
  readonly idleMs?: number;
  /** A function with sandboxes starts another once the head of its queue has waited this long (see START_AFTER_WAIT_MS). */
  readonly startAfterWaitMs?: number;
  /** A function's last sandbox may be stopped for another's room after this long idle (see `evictFor`). */
  readonly lastSandboxIdleMs?: number;
  /** A sandbox is not stopped for another function's room until it has lived this long (see `evictFor`). */
  readonly evictableAfterMs?: number;
}

/**
 * Sandboxes per function by default (the total cap below is what binds
 * first). 8, not 4: the saga's one step function runs about three
 * invocations per order (measured at 25/s: 43 a second at 60–90 ms each, more
 * than 4 sandboxes can serve), and with 4 its queue held 160–440 invocations.
 */
export const DEFAULT_MAX_SANDBOXES_PER_FUNCTION = 8;
/**
 * Sandboxes of all functions together by default. Measured here, a sandbox
 * costs about 25 MB resident fresh and 40–50 MB once it has run a while (its
 * heap and young generation grown). Under the integration suite (bursts of
 * 200 orders), 16 sandboxes took the main process to 750 MB and the whole
 * stack to 1,050 MB; 13 still peaked at 1,020 MB. 12 (one warm per function
 * of this app's 11, and room for one more) keeps the stack within 1 GB.
 * Measured when DynamoDB Local's JVM (260 MB of that) and tsx's launcher
 * (44 MB) ran beside the main process; both are gone, and the DynamoDB
 * engine now keeps its tables in the main process's heap instead.
 */
export const DEFAULT_MAX_SANDBOXES = 12;
/** How long an idle sandbox beyond a function's first is kept, by default (Lambda keeps them longer). */
export const DEFAULT_SANDBOX_IDLE_MS = 30_000;

export interface Pool {
  /** Replaced by `replaceFunction` (`npm start -- --watch`): new sandboxes start with the new one. */
  spec: FunctionSpec;
  /** How many sandboxes the function may have: its reserved concurrency, else the machine-sized cap. */
  cap: number;
  readonly sandboxes: Set<Sandbox>;
  /** Idle sandboxes, the most recently used last (taken first: it is the warmest). */
  readonly idle: Sandbox[];
  /** Invocations waiting for a sandbox, first come first served. */
  readonly queue: Waiter[];
  starting: number;
  /** Sandboxes whose invocation is pausing (see lentRoom). */
  paused: number;
  /** Invocations admitted and not finished (running or queued): what reserved concurrency bounds. */
  admitted: number;
  /** Set while the queue waits to be looked at again (see fillLater). */
  fillTimer: NodeJS.Timeout | undefined;
  /** Recent duration of its warm invocations (see RecentDuration). */
  readonly recent: RecentDuration;
  /** When the pool's last start became ready (performance.now()); 0 before (see queueWaitMs). */
  grewAt: number;
  readonly stats: PoolStats;
}

/** What the runtime's parts share: every function's pool, the options, and whether the runtime is stopping. */
export interface RuntimeState {
  readonly pools: Map<string, Pool>;
  readonly options: LambdaRuntimeOptions;
  /** The functions' log files' directory, which also holds the sandboxes' compile cache. */
  readonly logDir: string;
  readonly listeners: ((record: InvocationRecord) => void)[];
  /** The id of the sandbox started last. */
  nextId: number;
  stopped: boolean;
  /** Set while the functions that wait are to be looked at again (see refillLater). */
  refillTimer: NodeJS.Timeout | undefined;
}

/** A function's pool as it starts: no sandbox, nobody waiting. */
export function newPool(runtime: RuntimeState, spec: FunctionSpec): Pool {
  return {
    spec,
    cap: capOf(runtime, spec),
    sandboxes: new Set(),
    idle: [],
    queue: [],
    starting: 0,
    paused: 0,
    admitted: 0,
    fillTimer: undefined,
    recent: new RecentDuration(),
    grewAt: 0,
    stats: newPoolStats(),
  };
}

export function capOf(runtime: RuntimeState, spec: FunctionSpec): number {
  const perFunction = runtime.options.maxSandboxesPerFunction ?? DEFAULT_MAX_SANDBOXES_PER_FUNCTION;
  return Math.max(1, spec.reservedConcurrency ?? perFunction);
}

/** The total cap; never below one sandbox per function, so that every function can run. */
export function maxSandboxes(runtime: RuntimeState) {
  return Math.max(runtime.options.maxSandboxes ?? DEFAULT_MAX_SANDBOXES, runtime.pools.size);
}

export function sandboxCount(runtime: RuntimeState) {
  let n = 0;
  for (const pool of runtime.pools.values()) n += pool.sandboxes.size;
  return n;
}

/**
 * A sandbox's invocation `ended` (or, without it, the sandbox became ready):
 * unless the sandbox already runs the invocation handed over to it, it is
 * free, and the first waiting invocation takes it, else it waits idle.
 */
export function release(runtime: RuntimeState, sandbox: Sandbox, ended?: string) {
  if (sandbox.state !== 'busy') return;
  if (ended !== undefined && sandbox.current !== ended) return;
  sandbox.current = undefined;
  // Handed over after its invocation had answered: the worker, idle, starts it as it arrives.
  if (sandbox.nextUp) return promote(runtime, sandbox, sandbox.nextUp.id);
  endTurn(runtime, sandbox);
  // Started from a spec since replaced (replaceFunction): it runs old code, so it takes nothing more.
  if (sandbox.spec !== sandbox.pool.spec) {
    sandbox.pool.stats.reclaimed++;
    return stopSandbox(runtime, sandbox);
  }
  const { pool } = sandbox;
  // At the total cap, a function left with no sandbox at all (its last given up for another's room) waits
  // only for the next sandbox to free beyond its function's first, not for that function's queue to drain.
  // Seen in CI: throttled DynamoDB calls held the sweepers' runs for seconds, their scheduled runs queued
  // and took eight sandboxes, and a `POST /orders` waited its 10 s bound behind their queue.
  const starved =
    pool.sandboxes.size > 1 && workingCount(runtime) >= maxSandboxes(runtime) && starvedPool(runtime, pool);
  if (starved) {
    pool.stats.reclaimed++;
    stopSandbox(runtime, sandbox, false);
    fill(runtime, starved);
    return fillAll(runtime);
  }
  const next = pool.queue.shift();
  if (next) {
    next.grant({ sandbox });
    return handOver(runtime, sandbox);
  }
  // Room lent while others were paused is given back as soon as it is free.
  if (
    pool.sandboxes.size > 1 &&
    (pool.sandboxes.size > pool.cap || sandboxCount(runtime) > maxSandboxes(runtime))
  ) {
    pool.stats.reclaimed++;
    return stopSandbox(runtime, sandbox);
  }
  sandbox.state = 'idle';
  sandbox.idleSince = performance.now();
  sandbox.pool.idle.push(sandbox);
  takeBackFor(pool);
  // At the total cap, another function's waiting invocations may need this sandbox's room.
  if (sandboxCount(runtime) >= maxSandboxes(runtime)) fillAll(runtime);
}

/** The function, other than `pool`'s, that has invocations waiting and no sandbox, started or starting. */
export function starvedPool(runtime: RuntimeState, pool: Pool): Pool | undefined {
  for (const other of runtime.pools.values()) {
    if (other !== pool && other.queue.length > 0 && other.sandboxes.size === 0) return other;
  }
  return undefined;
}

/** Stops the sandboxes idle `idleMs` or longer, but never a function's last. */
export function reclaimIdle(runtime: RuntimeState, idleMs: number) {
  const now = performance.now();
  for (const pool of runtime.pools.values()) {
    for (const sandbox of [...pool.idle]) {
      if (pool.sandboxes.size <= 1) break;
      if (now - sandbox.idleSince < idleMs) continue;
      pool.stats.reclaimed++;
      stopSandbox(runtime, sandbox);
    }
  }
}
