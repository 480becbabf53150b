import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { acquire, admit, type Turn } from './admission';
import { FunctionError } from './errors';
import { FunctionDeaths } from './function-deaths';
import type { FunctionSpec } from './function-spec';
import { type InvocationRecord, memoryReport, meterInvocation, sandboxReport } from './metering';
import { setPaused } from './pauses';
import {
  capOf,
  DEFAULT_SANDBOX_IDLE_MS,
  type LambdaRuntimeOptions,
  newPool,
  type RuntimeState,
  reclaimIdle,
  release,
} from './pools';
import {
  giveBack,
  killSandbox,
  retire,
  type Sandbox,
  sendInvocation,
  startSandbox,
  stopSandbox,
} from './sandbox';

// The rest of the local cloud imports the Lambda runtime from this module only.
export { FunctionError, QueueWaitExceeded, THROTTLED_ERROR } from './errors';
export { type FunctionDeathRule, type FunctionDeaths, validateFunctionDeaths } from './function-deaths';
export { type FunctionSpec, functionSpecs, nodeOptions } from './function-spec';
export type { InvocationRecord, PoolStats } from './metering';
export { DEFAULT_MAX_LENT_SANDBOXES } from './pauses';
export { EVICTABLE_AFTER_MS, LAST_SANDBOX_IDLE_MS } from './pool-growth';
export {
  DEFAULT_MAX_SANDBOXES,
  DEFAULT_MAX_SANDBOXES_PER_FUNCTION,
  DEFAULT_SANDBOX_IDLE_MS,
  type LambdaRuntimeOptions,
} from './pools';

/** What Lambda answers for an invocation whose runtime process was killed (see function-deaths.ts). */
const exitedMidway = (id: string) =>
  `RequestId: ${id} Error: Runtime exited with error: signal: killed (a fault injected midway)`;
const exitedAfterWork = (id: string) =>
  `RequestId: ${id} Error: Runtime exited with error: signal: killed (a fault injected after its work)`;

/**
 * Runs each function as Lambda does: a pool of sandboxes per function, each
 * a worker thread (its own process.env and module state) that runs one
 * invocation at a time. An invocation takes an idle sandbox, else starts a
 * new one while the function is below its cap, else waits in the function's
 * queue (first come, first served), or, with no bound on its wait, is handed
 * over to a busy sandbox that starts it next (see `handOver`). The timeout
 * from the template counts from an invocation's turn; a sandbox whose
 * invocation timed out is stopped and replaced (Lambda resets such an
 * environment), so that it never runs two at once. Idle sandboxes beyond a function's first are stopped after a while.
 *
 * This class is the runtime's facade; its parts are: pools.ts (each function's pool, its caps, a freed
 * sandbox's next use, idle ones reclaimed), pool-growth.ts (when a pool starts a sandbox, and room made at
 * the total cap), admission.ts (reserved concurrency, the wait for a sandbox), hand-over.ts (an invocation
 * given to a busy sandbox to start next), pauses.ts (paused invocations and the room they lend),
 * sandbox.ts (a sandbox's worker from start to stop) and metering.ts (durations, CPU, counters).
 */
export class LambdaRuntime {
  /** Every function's pool, and what the runtime's parts share (see RuntimeState). */
  private readonly state: RuntimeState;
  private readonly specsById: Map<string, FunctionSpec>;
  private readonly reaper: NodeJS.Timeout;
  /** Invocations killed with their sandbox, as the admin API asks (`POST /_local/faults/functions`). */
  readonly deaths = new FunctionDeaths();

  constructor(specs: readonly FunctionSpec[], logDir: string, options: LambdaRuntimeOptions | boolean = {}) {
    this.state = {
      pools: new Map(),
      options: typeof options === 'boolean' ? { echoLogs: options } : options,
      logDir,
      listeners: [],
      nextId: 0,
      stopped: false,
      refillTimer: undefined,
    };
    this.specsById = new Map(specs.map((s) => [s.logicalId, s]));
    mkdirSync(logDir, { recursive: true });
    for (const spec of specs) this.state.pools.set(spec.logicalId, newPool(this.state, spec));
    const idleMs = this.state.options.idleMs ?? DEFAULT_SANDBOX_IDLE_MS;
    this.reaper = setInterval(() => reclaimIdle(this.state, idleMs), Math.min(idleMs, 5_000));
    this.reaper.unref();
  }

  /**
   * The directory of the functions' log files (`<logical id>.log`, one JSON line per line a
   * function wrote), or undefined when their output goes to the terminal instead.
   */
  get logDirectory(): string | undefined {
    return this.state.options.echoLogs ? undefined : this.state.logDir;
  }

  /** Each function's current spec, by logical id. */
  get specs(): ReadonlyMap<string, FunctionSpec> {
    return this.specsById;
  }

  /**
   * Points a function at a new spec (its new bundle, after `npm start --
   * --watch` re-synthesized the app). Its idle sandboxes stop now; a busy one
   * finishes its invocation and then stops, and one still starting stops as
   * soon as it is ready, so no invocation that takes a sandbox after this
   * returns runs the old code: it gets a sandbox started from the new spec
   * (a cold start, as after a deployment on Lambda).
   */
  replaceFunction(spec: FunctionSpec) {
    const pool = this.state.pools.get(spec.logicalId);
    if (!pool) throw new Error(`no local function ${spec.logicalId}`);
    pool.spec = spec;
    pool.cap = capOf(this.state, spec);
    this.specsById.set(spec.logicalId, spec);
    for (const sandbox of [...pool.idle]) {
      pool.stats.reclaimed++;
      stopSandbox(this.state, sandbox);
    }
  }

  onInvocation(listener: (record: InvocationRecord) => void) {
    this.state.listeners.push(listener);
  }

  /** Resolves a function name, ARN or logical id to the function's logical id. */
  functionIdOf(nameOrArn: string): string {
    const name = nameOrArn.startsWith('arn:') ? nameOrArn.split(':')[6]! : nameOrArn;
    if (!this.specs.has(name)) throw new Error(`no local function ${nameOrArn}`);
    return name;
  }

  /** Starts one sandbox per function now rather than on first use (so the first request is not a cold start). */
  async warmAll() {
    await this.warm(this.state.pools.keys());
  }

  /** Starts a sandbox of each of `functionIds` that has none yet, and waits until they are ready. */
  async warm(functionIds: Iterable<string>) {
    await Promise.all(
      [...new Set(functionIds)].map((id) => {
        const pool = this.state.pools.get(id);
        if (!pool) throw new Error(`no local function ${id}`);
        const starting = [...pool.sandboxes].find((s) => s.state === 'starting');
        if (starting) return starting.ready;
        return pool.sandboxes.size > 0 ? undefined : startSandbox(this.state, pool).ready;
      }),
    );
  }

  /**
   * Invokes a function with `event` and resolves with its result, or rejects with a FunctionError.
   * `onPause` is told when the invocation first pauses (it has done its work and waits).
   * `maxQueueWaitMs`, when given, bounds the wait for a sandbox: an invocation still queued then leaves
   * the queue unrun and is refused as throttled (Lambda refuses a synchronous invocation it has no
   * environment for rather than holding it).
   * `onStart` is told the invocation's request id (its `awsRequestId`) when it starts in a sandbox.
   */
  async invoke(
    functionId: string,
    event: unknown,
    options: { onPause?: () => void; maxQueueWaitMs?: number; onStart?: (requestId: string) => void } = {},
  ): Promise<unknown> {
    const pool = this.state.pools.get(functionId);
    if (!pool) throw new Error(`no local function ${functionId}`);
    const { spec } = pool;
    admit(pool, functionId);
    const arrived = performance.now();
    let started = arrived;
    let ok = false;
    let timedOut = false;
    let sandbox: Sandbox | undefined;
    let id = '';
    let pausedBefore = 0;
    let timer: NodeJS.Timeout | undefined;
    let midway: NodeJS.Timeout | undefined;
    try {
      let returned = false;
      let turn: Turn;
      let answer: Promise<unknown>;
      for (;;) {
        turn = await acquire(this.state, pool, options.maxQueueWaitMs, arrived, returned);
        id = turn.handOver?.id ?? randomUUID();
        answer = sendInvocation(turn, id, functionId, spec, event, options.onPause);
        if (!turn.handOver || (await turn.handOver.outcome) === 'started') break;
        turn.sandbox.pending.delete(id);
        returned = true;
      }
      sandbox = turn.sandbox;
      options.onStart?.(id);
      if (turn.handOver) pool.stats.handedOver++;
      if (sandbox.invocations++ === 0) pool.stats.used++;
      pool.stats.invocations++;
      pausedBefore = sandbox.pausedMs;
      // The timeout (and the billed duration) counts from the invocation's turn, as on Lambda.
      started = performance.now();
      const running = sandbox;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          running.pending.delete(id);
          timedOut = true;
          reject(
            new FunctionError(
              functionId,
              'Sandbox.Timedout',
              `Task timed out after ${spec.timeoutMs / 1000} seconds`,
            ),
          );
        }, spec.timeoutMs);
      });
      const diesMidway = this.deaths.draw(functionId, 'midway');
      if (diesMidway) {
        // Some moment of its work: its recent duration (a few ms when it is not known yet) at random; one
        // whose work ends first dies as it answers, so that every death drawn is a death.
        const at = Math.random() * Math.max(pool.recent.ms ?? 0, 5);
        midway = setTimeout(() => {
          if (running.current === id) killSandbox(this.state, running, exitedMidway(id));
        }, at);
      }
      let answered: { result: unknown } | { error: unknown };
      try {
        answered = { result: await Promise.race([answer, timeout]) };
      } catch (error) {
        // A timeout, or a sandbox that died, answered nothing to lose; a function's own error did.
        if (timedOut || !(error instanceof FunctionError) || running.state === 'stopped') throw error;
        answered = { error };
      }
      if (diesMidway || this.deaths.draw(functionId, 'after-work')) {
        const why = diesMidway ? exitedMidway(id) : exitedAfterWork(id);
        killSandbox(this.state, running, why);
        throw new FunctionError(functionId, 'Runtime.ExitError', why);
      }
      if ('error' in answered) throw answered.error;
      ok = true;
      return answered.result;
    } finally {
      clearTimeout(timer);
      clearTimeout(midway);
      pool.admitted--;
      if (sandbox) {
        // The time it only waited (paused) is billed, as on Lambda, but is not the function's work: the recent
        // duration, which admission reads as how fast the function drains its queue, leaves it out.
        if (sandbox.current === id) setPaused(this.state, sandbox, false);
        const pausedMs = sandbox.pausedMs - pausedBefore;
        if (timedOut && sandbox.state === 'busy' && sandbox.current === id) retire(this.state, sandbox);
        else release(this.state, sandbox, id);
        meterInvocation(this.state, pool, sandbox, spec, started, pausedMs, ok);
      }
    }
  }

  /**
   * How long an invocation arriving now would wait for a sandbox, in ms: the
   * longer of what the queue's head has waited so far and what the queue
   * ahead of it takes to drain at the function's recent duration over the
   * sandboxes it has, one starting included (0 when a sandbox is free). The
   * head's wait alone lags: a long queue behind a head that has waited little
   * still means a long wait.
   */
  expectedWaitMs(functionId: string): number {
    const pool = this.state.pools.get(functionId);
    if (!pool || pool.queue.length === 0) return 0;
    // Not over the sandboxes it may grow to: a pool grows one start at a time, and only for a queue that has
    // waited, and on a busy machine more sandboxes share the same cores. Counted over its cap, a 200/s burst
    // admitted reservations that then waited out the queue's bound (183 of 204 refusals, after 5 s).
    const serving = Math.max(1, pool.sandboxes.size);
    const draining = (pool.queue.length * (pool.recent.ms ?? 0)) / serving;
    return Math.max(performance.now() - pool.queue[0]!.since, draining);
  }

  /** What admission control reads of a function's pool. */
  load(functionId: string): {
    cap: number;
    sandboxes: number;
    recentMs: number | undefined;
    invocations: number;
  } {
    const pool = this.state.pools.get(functionId);
    if (!pool) throw new Error(`no local function ${functionId}`);
    return {
      cap: pool.cap,
      sandboxes: pool.sandboxes.size,
      recentMs: pool.recent.ms,
      invocations: pool.stats.invocations,
    };
  }

  /** Each function's pool: its cap, sandboxes, queue and counters. */
  sandboxes() {
    return sandboxReport(this.state);
  }

  /** Each function's sandboxes' heap, summed, in MiB (what a function holds onto between invocations). */
  memory() {
    return memoryReport(this.state);
  }

  async stop() {
    this.state.stopped = true;
    clearInterval(this.reaper);
    clearTimeout(this.state.refillTimer);
    const workers: Worker[] = [];
    for (const pool of this.state.pools.values()) {
      clearTimeout(pool.fillTimer);
      for (const waiter of pool.queue.splice(0)) {
        waiter.fail(
          new FunctionError(pool.spec.logicalId, 'Runtime.ExitError', 'the local cloud is stopping'),
        );
      }
      for (const sandbox of pool.sandboxes) {
        sandbox.state = 'stopped';
        giveBack(sandbox);
        workers.push(sandbox.worker);
      }
      pool.sandboxes.clear();
      pool.idle.length = 0;
    }
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
