import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type Assembly, REGION, type Resolve, resourcesOfType } from '../assembly';
import { RecentDuration } from './recent-duration';

export interface FunctionSpec {
  readonly logicalId: string;
  readonly codeDir: string;
  readonly handler: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  /** The function's reserved concurrency: invocations beyond it are throttled, as on Lambda. */
  readonly reservedConcurrency?: number;
  readonly environment: Record<string, string>;
}

/** The error of an invocation refused for the function's concurrency, named as Step Functions sees it. */
export const THROTTLED_ERROR = 'Lambda.TooManyRequestsException';

/** What a failed invocation reports, as Lambda does (`errorType`, `errorMessage`). */
export class FunctionError extends Error {
  constructor(
    readonly functionName: string,
    readonly errorType: string,
    errorMessage: string,
    readonly trace: readonly string[] = [],
  ) {
    super(errorMessage);
    this.name = 'FunctionError';
  }
}

/** An invocation refused because it waited its bound for a sandbox (see `LambdaRuntime.invoke`): it never ran. */
export class QueueWaitExceeded extends FunctionError {
  constructor(functionName: string, maxWaitMs: number) {
    super(functionName, THROTTLED_ERROR, `no sandbox free within ${maxWaitMs} ms`);
  }
}

export interface InvocationRecord {
  readonly functionName: string;
  readonly memoryMb: number;
  readonly durationMs: number;
  readonly ok: boolean;
}

/**
 * The flags of a function's NODE_OPTIONS (e.g. `--enable-source-maps` in a debug build), for its
 * sandboxes' execArgv. A flag a worker thread cannot take fails the sandbox's start, naming it.
 */
export const nodeOptions = (value: string | undefined): string[] => value?.split(/\s+/).filter(Boolean) ?? [];

/** Reads every AWS::Lambda::Function of the template into what a sandbox needs. */
export function functionSpecs(
  assembly: Assembly,
  resolve: Resolve,
  extraEnvironment: Record<string, string>,
) {
  return resourcesOfType(assembly.template, 'AWS::Lambda::Function').map(([logicalId, r]): FunctionSpec => {
    const p = r.Properties ?? {};
    const assetPath = r.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string')
      throw new Error(`function ${logicalId} has no bundled asset in the assembly`);
    const variables = resolve(
      (p.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
    ) as Record<string, unknown>;
    const memoryMb = Number(p.MemorySize ?? 128);
    return {
      logicalId,
      codeDir: join(assembly.dir, assetPath),
      handler: String(p.Handler ?? 'index.handler'),
      timeoutMs: Number(p.Timeout ?? 3) * 1000,
      memoryMb,
      ...(p.ReservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrency: Number(p.ReservedConcurrentExecutions) }),
      environment: {
        ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(v)])),
        AWS_REGION: REGION,
        AWS_DEFAULT_REGION: REGION,
        AWS_LAMBDA_FUNCTION_NAME: logicalId,
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        // Lambda's own: Powertools tells a cold start (its ColdStart metric, `cold_start` on log lines) by it.
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
        AWS_EXECUTION_ENV: `AWS_Lambda_${String(p.Runtime ?? 'nodejs22.x')}`,
        LAMBDA_TASK_ROOT: join(assembly.dir, assetPath),
        ...extraEnvironment,
      },
    };
  });
}

interface WorkerMessage {
  readonly ready?: true;
  readonly id?: string;
  readonly result?: string | null;
  readonly error?: { errorType: string; errorMessage: string; trace: string[] };
  /** Set on an invocation's answer: another invocation was running in the sandbox when it started. */
  readonly overlapped?: boolean;
  /** The invocation started (true) or ended (false) a pause: it waits on a timer, with no work to do. */
  readonly pausing?: boolean;
  /** The sandbox thread's CPU time so far, ms: sent when it is ready and with each answer. */
  readonly cpuMs?: number;
  /** On an answer: the invocation handed over meanwhile (see `handOver`), which the sandbox started right after it. */
  readonly startedNext?: string;
  /** An invocation handed over that the sandbox gives back unstarted: asked to, or its own one paused or overran. */
  readonly returned?: string;
}

interface Call {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** One execution environment: a worker thread that runs one invocation at a time. */
interface Sandbox {
  readonly id: number;
  readonly pool: Pool;
  /** What it was started with: once its pool's spec is replaced, it runs old code and takes no more invocations. */
  readonly spec: FunctionSpec;
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** `starting` until its handler is loaded; `busy` while an invocation holds it; `stopped` for good. */
  state: 'starting' | 'idle' | 'busy' | 'stopped';
  idleSince: number;
  /** When it was started (performance.now()). */
  readonly startedAt: number;
  invocations: number;
  /** Answers the sandbox owes: its invocation's, and any memory or flush request. */
  readonly pending: Map<string, Call>;
  /** Its invocation waits on a timer (see worker.js): the sandbox does not count as work meanwhile. */
  paused: boolean;
  /**
   * When its invocation first paused (performance.now(); 0 before): a wait
   * pauses, reads, pauses again; from LEND_AFTER_PAUSED_MS after its first
   * pause, the sandbox lends its room while paused.
   */
  waitingSince: number;
  /** How long its current invocation has been paused in all, ms (not work: kept out of the recent duration). */
  pausedMs: number;
  /** When its current pause began (performance.now()). */
  pausedAt: number;
  /** Its thread's CPU time at its last report, ms. */
  cpuMs: number;
  /** Told once when its invocation first pauses (see invoke's `onPause`). */
  onPause: (() => void) | undefined;
  /** The id of the invocation it runs; undefined while free (or between a grant and the invocation's send). */
  current: string | undefined;
  /** When its current invocation started (performance.now()). */
  busySince: number;
  /** The invocation handed over to it while it runs another (see `handOver`), not started yet. */
  nextUp: HandOver | undefined;
}

/**
 * An invocation given to a busy sandbox: its worker holds it and starts it
 * the moment the one it runs has answered, as Lambda's runtime asks for the
 * next event as soon as it has posted a response (see `handOver`).
 */
interface HandOver {
  readonly id: string;
  /** When its invocation arrived (performance.now()): it waits as a queued one does (see `fill`). */
  readonly since: number;
  /** 'started' once the sandbox runs it; 'returned' if given back unstarted (it then waits for a sandbox again). */
  readonly outcome: Promise<'started' | 'returned'>;
  settle(outcome: 'started' | 'returned'): void;
}

/** What an invocation waiting for a sandbox is given: the sandbox, free, or busy with the turn after its invocation. */
interface Turn {
  readonly sandbox: Sandbox;
  readonly handOver?: HandOver;
}

interface Waiter {
  /** When it joined the queue (performance.now()). */
  since: number;
  /** It may wait only so long (an HTTP API request's bound): it is never handed over (see `handOver`). */
  readonly bounded: boolean;
  grant: (turn: Turn) => void;
  fail: (error: Error) => void;
}

/** What the runtime counts of one function's sandboxes (served at `/_local/sandboxes`). */
export interface PoolStats {
  /** Sandboxes started, and how many of them ran at least one invocation. */
  started: number;
  used: number;
  /** Sandboxes stopped after an idle time, after a timed-out invocation, or because they crashed. */
  reclaimed: number;
  replacedAfterTimeout: number;
  crashed: number;
  invocations: number;
  /** Invocations that started while another was running in the same sandbox: always 0. */
  overlaps: number;
  /** Invocations handed over to a busy sandbox, which started each as soon as the one before had answered. */
  handedOver: number;
  /** Invocations handed over and given back unstarted, to wait for a sandbox again (see `handOver`). */
  givenBack: number;
  /** The most invocations that waited in the queue at once. */
  mostQueued: number;
  /** Invocations that left the queue unrun, refused for waiting past their bound (see `invoke`). */
  queueTimeouts: number;
  /** Pauses invocations took (each lends its sandbox's room), and the most sandboxes paused at once. */
  pauses: number;
  mostPaused: number;
  /**
   * CPU time of the function's sandbox threads, ms: starting them (the
   * worker and its handler's module loaded), and running invocations (each
   * answer's thread total less the last one reported).
   */
  startCpuMs: number;
  invocationCpuMs: number;
}

interface Pool {
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
  /** Sandboxes whose invocation is pausing (see LambdaRuntime.lentRoom). */
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
/** How long an idle sandbox beyond a function's first is kept, by default (Lambda keeps them longer). */
export const DEFAULT_SANDBOX_IDLE_MS = 30_000;
/** A function's last sandbox is taken for another function's room only after this long idle. */
export const LAST_SANDBOX_IDLE_MS = 10_000;
/**
 * A sandbox is stopped for another function's room only once it has lived
 * this long, so that a start (150–250 ms of CPU here) buys its function at
 * least this much service. Measured without it, in 25/s levels that fell
 * into the slow mode: at the total cap the orders API and the saga's steps
 * took each other's just-freed sandboxes in turn, and started 22–34 and
 * 23–31 sandboxes in a level (2.8–8.3 ms of CPU per transaction in starts,
 * against 0–0.6 in levels that ran well).
 */
export const EVICTABLE_AFTER_MS = 5_000;
/**
 * A sandbox's young generation (V8's space for new objects), MiB. V8 sizes
 * it from the old generation's limit (up to 512 MB here) and grows it while
 * much survives, and a dozen isolates each keep theirs. Measured at 20/s on
 * 64-shard products: the local cloud's process peaked at 542–568 MB with 12
 * (two runs) against 695–729 MB with V8's sizing (six runs); CPU per
 * transaction, 63–71 ms against 35–84, within that day's noise.
 */
const SANDBOX_YOUNG_GENERATION_MB = 12;
/**
 * A function that has sandboxes starts another only once the invocation at
 * the head of its queue has waited this long (see `queueWaitMs`). Lambda
 * starts an environment for every invocation that finds none free; here a
 * start costs 150–250 ms of CPU on the same two cores as everything else
 * (measured: a function's worker and bundle), and a new sandbox is cold: its
 * invocations cost two to four times a warm one's CPU until V8 has optimized
 * the AWS SDK's code in it, which takes it a few thousand invocations. So a
 * pool grows only for a queue that has lasted, not for one that would drain.
 * With the threshold on the queue's expected drain at the recent duration
 * (50 ms), the saga's step function and the orders API grew to 5–10
 * sandboxes in a 25/s load's first seconds, while their first sandbox was
 * still cold and slow, and every one of them stayed lukewarm; see
 * docs/benchmarks.md, session 14, for the levels with and without it.
 */
const START_AFTER_WAIT_MS = 250;
/**
 * At the total cap a start stops another function's sandbox to make room,
 * which that function will likely start again: two cold starts. So it waits
 * for a longer queue. Measured at 25 iterations/s on a saturated machine with
 * only START_AFTER_WAIT_MS: the API functions started 40–53 sandboxes each in
 * a level of 45 s, taking each other's room in turn.
 */
const EVICT_AFTER_WAIT_MS = 500;

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
 */
export class LambdaRuntime {
  private readonly pools = new Map<string, Pool>();
  private readonly specsById: Map<string, FunctionSpec>;
  private readonly listeners: ((record: InvocationRecord) => void)[] = [];
  private readonly options: LambdaRuntimeOptions;
  private readonly reaper: NodeJS.Timeout;
  private nextId = 0;
  private stopped = false;
  private refillTimer: NodeJS.Timeout | undefined;

  constructor(
    specs: readonly FunctionSpec[],
    private readonly logDir: string,
    options: LambdaRuntimeOptions | boolean = {},
  ) {
    this.options = typeof options === 'boolean' ? { echoLogs: options } : options;
    this.specsById = new Map(specs.map((s) => [s.logicalId, s]));
    mkdirSync(logDir, { recursive: true });
    for (const spec of specs) {
      this.pools.set(spec.logicalId, {
        spec,
        cap: this.capOf(spec),
        sandboxes: new Set(),
        idle: [],
        queue: [],
        starting: 0,
        paused: 0,
        admitted: 0,
        fillTimer: undefined,
        recent: new RecentDuration(),
        grewAt: 0,
        stats: {
          started: 0,
          used: 0,
          reclaimed: 0,
          replacedAfterTimeout: 0,
          crashed: 0,
          invocations: 0,
          overlaps: 0,
          handedOver: 0,
          givenBack: 0,
          mostQueued: 0,
          queueTimeouts: 0,
          pauses: 0,
          mostPaused: 0,
          startCpuMs: 0,
          invocationCpuMs: 0,
        },
      });
    }
    const idleMs = this.options.idleMs ?? DEFAULT_SANDBOX_IDLE_MS;
    this.reaper = setInterval(() => this.reclaimIdle(idleMs), Math.min(idleMs, 5_000));
    this.reaper.unref();
  }

  /**
   * The directory of the functions' log files (`<logical id>.log`, one JSON line per line a
   * function wrote), or undefined when their output goes to the terminal instead.
   */
  get logDirectory(): string | undefined {
    return this.options.echoLogs ? undefined : this.logDir;
  }

  /** Each function's current spec, by logical id. */
  get specs(): ReadonlyMap<string, FunctionSpec> {
    return this.specsById;
  }

  private capOf(spec: FunctionSpec): number {
    const perFunction = this.options.maxSandboxesPerFunction ?? DEFAULT_MAX_SANDBOXES_PER_FUNCTION;
    return Math.max(1, spec.reservedConcurrency ?? perFunction);
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
    const pool = this.pools.get(spec.logicalId);
    if (!pool) throw new Error(`no local function ${spec.logicalId}`);
    pool.spec = spec;
    pool.cap = this.capOf(spec);
    this.specsById.set(spec.logicalId, spec);
    for (const sandbox of [...pool.idle]) {
      pool.stats.reclaimed++;
      this.stopSandbox(sandbox);
    }
  }

  onInvocation(listener: (record: InvocationRecord) => void) {
    this.listeners.push(listener);
  }

  /** Resolves a function name, ARN or logical id to the function's logical id. */
  functionIdOf(nameOrArn: string): string {
    const name = nameOrArn.startsWith('arn:') ? nameOrArn.split(':')[6]! : nameOrArn;
    if (!this.specs.has(name)) throw new Error(`no local function ${nameOrArn}`);
    return name;
  }

  /** Starts one sandbox per function now rather than on first use (so the first request is not a cold start). */
  async warmAll() {
    await this.warm(this.pools.keys());
  }

  /** Starts a sandbox of each of `functionIds` that has none yet, and waits until they are ready. */
  async warm(functionIds: Iterable<string>) {
    await Promise.all(
      [...new Set(functionIds)].map((id) => {
        const pool = this.pools.get(id);
        if (!pool) throw new Error(`no local function ${id}`);
        const starting = [...pool.sandboxes].find((s) => s.state === 'starting');
        if (starting) return starting.ready;
        return pool.sandboxes.size > 0 ? undefined : this.start(pool).ready;
      }),
    );
  }

  /** The total cap; never below one sandbox per function, so that every function can run. */
  private get maxSandboxes() {
    return Math.max(this.options.maxSandboxes ?? DEFAULT_MAX_SANDBOXES, this.pools.size);
  }

  private get sandboxCount() {
    let n = 0;
    for (const pool of this.pools.values()) n += pool.sandboxes.size;
    return n;
  }

  /** How many of `pool`'s sandboxes lend their room: paused for LEND_AFTER_PAUSED_MS at least. */
  private lentRoom(pool: Pool): number {
    if (pool.paused === 0) return 0;
    const before = performance.now() - LEND_AFTER_PAUSED_MS;
    let n = 0;
    for (const s of pool.sandboxes) if (s.paused && s.waitingSince <= before) n++;
    return n;
  }

  /** Sandboxes that count against the total cap: all but those that lend their room. */
  private get workingCount() {
    let n = 0;
    for (const pool of this.pools.values()) n += pool.sandboxes.size - this.lentRoom(pool);
    return n;
  }

  /** Whether another sandbox may start, lent room included: never more than the caps plus the lent ones. */
  private get belowCeiling() {
    return (
      this.sandboxCount < this.maxSandboxes + (this.options.maxLentSandboxes ?? DEFAULT_MAX_LENT_SANDBOXES)
    );
  }

  /**
   * Marks a sandbox's invocation paused or resumed. A pause that lasts lends
   * the sandbox's room (see lentRoom) to the invocations waiting, whichever
   * function they are for: each gets a sandbox of its own, as on Lambda,
   * never a share of the paused one (one invocation per sandbox).
   */
  private setPaused(sandbox: Sandbox, paused: boolean) {
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
      if (sandbox.paused && !this.stopped) this.fillAll();
    };
    const lendsInMs = sandbox.waitingSince + LEND_AFTER_PAUSED_MS - now;
    if (lendsInMs <= 0) return lend();
    setTimeout(lend, lendsInMs + 1).unref();
  }

  private start(pool: Pool): Sandbox {
    const { spec } = pool;
    const functionId = spec.logicalId;
    const worker = new Worker(join(__dirname, 'worker.js'), {
      // Echoing means the parent's output, so the worker's must come through the parent.
      workerData: {
        codeDir: spec.codeDir,
        handler: spec.handler,
        // In the runtime's directory: the sandboxes of one cloud share it.
        compileCacheDir: join(this.logDir, '.compile-cache'),
        ...(this.options.echoLogs ? {} : { logFile: join(this.logDir, `${functionId}.log`) }),
      },
      env: spec.environment,
      // Not the TypeScript loader the local cloud itself runs under: the sandbox runs plain bundles,
      // with the Node options the function's environment sets, as Lambda's runtime reads NODE_OPTIONS.
      execArgv: nodeOptions(spec.environment.NODE_OPTIONS),
      resourceLimits: {
        maxOldGenerationSizeMb: Math.min(spec.memoryMb, 512),
        maxYoungGenerationSizeMb: SANDBOX_YOUNG_GENERATION_MB,
      },
    });
    let markReady: () => void;
    let failStart: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    // A start failure is reported to whoever waits on it; nobody waiting is not an unhandled rejection.
    ready.catch(() => undefined);
    const startedAt = performance.now();
    const sandbox: Sandbox = {
      id: ++this.nextId,
      pool,
      spec,
      worker,
      ready,
      state: 'starting',
      idleSince: startedAt,
      startedAt,
      invocations: 0,
      pending: new Map(),
      paused: false,
      waitingSince: 0,
      pausedMs: 0,
      pausedAt: 0,
      cpuMs: 0,
      onPause: undefined,
      current: undefined,
      busySince: startedAt,
      nextUp: undefined,
    };
    pool.sandboxes.add(sandbox);
    pool.starting++;
    pool.stats.started++;
    worker.on('message', (message: WorkerMessage) => {
      if (message.pausing !== undefined) {
        if (sandbox.state === 'busy') this.setPaused(sandbox, message.pausing);
        return;
      }
      if (message.cpuMs !== undefined) {
        const spent = message.cpuMs - sandbox.cpuMs;
        sandbox.cpuMs = message.cpuMs;
        if (message.ready) pool.stats.startCpuMs += spent;
        else pool.stats.invocationCpuMs += spent;
      }
      if (message.ready) {
        pool.starting--;
        sandbox.state = 'busy';
        markReady();
        pool.grewAt = performance.now();
        this.release(sandbox);
        this.fill(pool);
        return;
      }
      if (message.returned !== undefined) {
        if (sandbox.nextUp?.id === message.returned) sandbox.nextUp.settle('returned');
        return;
      }
      if (message.id === undefined) return;
      if (message.overlapped) pool.stats.overlaps++;
      const call = sandbox.pending.get(message.id);
      if (call) {
        sandbox.pending.delete(message.id);
        if (message.error) {
          const e = message.error;
          call.reject(new FunctionError(functionId, e.errorType, e.errorMessage, e.trace));
        } else call.resolve(message.result == null ? null : JSON.parse(message.result));
      }
      // After the answer, so that the answered invocation's own accounting (its pauses) is done first.
      if (message.startedNext !== undefined) this.promote(sandbox, message.startedNext);
    });
    const crash = (error: Error) => {
      if (sandbox.state === 'stopped') return;
      if (sandbox.state === 'starting') {
        pool.starting--;
        // The start failed (the handler's module threw, say): the oldest waiting invocation learns why.
        pool.queue.shift()?.fail(error);
      } else pool.stats.crashed++;
      failStart(error);
      this.remove(sandbox);
      this.abandon(sandbox, `sandbox stopped: ${error.message}`);
    };
    worker.on('error', crash);
    worker.on('exit', (code) => crash(new Error(`worker exited with code ${code}`)));
    return sandbox;
  }

  /**
   * Takes a sandbox out of its pool for good, and (unless `refill` is false:
   * the caller takes the room itself) lets waiting invocations start
   * sandboxes in its place.
   */
  private remove(sandbox: Sandbox, refill = true) {
    const { pool } = sandbox;
    this.setPaused(sandbox, false);
    sandbox.state = 'stopped';
    pool.sandboxes.delete(sandbox);
    const at = pool.idle.indexOf(sandbox);
    if (at >= 0) pool.idle.splice(at, 1);
    if (this.stopped || !refill) return;
    this.fill(pool);
    for (const other of this.pools.values()) if (other !== pool) this.fill(other);
  }

  /**
   * A sandbox's invocation `ended` (or, without it, the sandbox became ready):
   * unless the sandbox already runs the invocation handed over to it, it is
   * free, and the first waiting invocation takes it, else it waits idle.
   */
  private release(sandbox: Sandbox, ended?: string) {
    if (sandbox.state !== 'busy') return;
    if (ended !== undefined && sandbox.current !== ended) return;
    sandbox.current = undefined;
    // Handed over after its invocation had answered: the worker, idle, starts it as it arrives.
    if (sandbox.nextUp) return this.promote(sandbox, sandbox.nextUp.id);
    this.endTurn(sandbox);
    // Started from a spec since replaced (replaceFunction): it runs old code, so it takes nothing more.
    if (sandbox.spec !== sandbox.pool.spec) {
      sandbox.pool.stats.reclaimed++;
      return this.stopSandbox(sandbox);
    }
    const { pool } = sandbox;
    // At the total cap, a function left with no sandbox at all (its last given up for another's room) waits
    // only for the next sandbox to free beyond its function's first, not for that function's queue to drain.
    // Seen in CI: throttled DynamoDB calls held the sweepers' runs for seconds, their scheduled runs queued
    // and took eight sandboxes, and a `POST /orders` waited its 10 s bound behind their queue.
    const starved =
      pool.sandboxes.size > 1 && this.workingCount >= this.maxSandboxes && this.starvedPool(pool);
    if (starved) {
      pool.stats.reclaimed++;
      this.stopSandbox(sandbox, false);
      this.fill(starved);
      return this.fillAll();
    }
    const next = pool.queue.shift();
    if (next) {
      next.grant({ sandbox });
      return this.handOver(sandbox);
    }
    // Room lent while others were paused is given back as soon as it is free.
    if (
      pool.sandboxes.size > 1 &&
      (pool.sandboxes.size > pool.cap || this.sandboxCount > this.maxSandboxes)
    ) {
      pool.stats.reclaimed++;
      return this.stopSandbox(sandbox);
    }
    sandbox.state = 'idle';
    sandbox.idleSince = performance.now();
    sandbox.pool.idle.push(sandbox);
    this.takeBackFor(pool);
    // At the total cap, another function's waiting invocations may need this sandbox's room.
    if (this.sandboxCount >= this.maxSandboxes) this.fillAll();
  }

  /**
   * Hands the first waiting invocation over to `sandbox`, busy, when it may
   * take one (see `handOverTarget`): its worker then holds it and starts it
   * the moment its current invocation answers, as Lambda's runtime asks for
   * the next event as soon as it has posted a response. Without it, a queued
   * invocation waited for the answer to reach this (main) thread and for its
   * event to go back, each behind whatever this thread was doing: measured at
   * 50 iterations/s, the saga's busy sandbox sat idle 0.8–2.6 ms at the
   * median (2.8–9 ms at p90) between steps that were waiting for it. Only
   * invocations without a bound on their wait (saga steps, stream batches,
   * scheduled and asynchronous runs) are handed over: an HTTP API request
   * keeps its place in the queue, where its bound is kept.
   */
  private handOver(sandbox: Sandbox) {
    const { pool } = sandbox;
    const head = pool.queue[0];
    if (!head || head.bounded || !this.mayHoldNext(sandbox) || !this.mayHandOver(pool)) return;
    pool.queue.shift();
    head.grant({ sandbox, handOver: this.holdNext(sandbox, head.since) });
  }

  /** Whether `sandbox` may be handed an invocation to start after its current one (its pool permitting). */
  private mayHoldNext(sandbox: Sandbox): boolean {
    return (
      sandbox.state === 'busy' &&
      sandbox.nextUp === undefined &&
      !sandbox.paused &&
      sandbox.spec === sandbox.pool.spec
    );
  }

  /** Whether `pool`'s busy sandboxes may be handed invocations at all. */
  private mayHandOver(pool: Pool): boolean {
    return (
      // Room over the caps (lent while others paused) is given back as soon as it is free.
      pool.sandboxes.size <= pool.cap &&
      this.sandboxCount <= this.maxSandboxes &&
      // A function with no sandbox at all at the total cap gets the next one to free (see `release`).
      !(this.workingCount >= this.maxSandboxes && this.starvedPool(pool))
    );
  }

  /** The busy sandbox of `pool` an arriving invocation may be handed over to: the one busy the longest. */
  private handOverTarget(pool: Pool): Sandbox | undefined {
    if (!this.mayHandOver(pool)) return undefined;
    let target: Sandbox | undefined;
    for (const s of pool.sandboxes) {
      if (this.mayHoldNext(s) && (!target || s.busySince < target.busySince)) target = s;
    }
    return target;
  }

  private holdNext(sandbox: Sandbox, since: number): HandOver {
    let resolve!: (outcome: 'started' | 'returned') => void;
    const outcome = new Promise<'started' | 'returned'>((r) => {
      resolve = r;
    });
    const handOver: HandOver = {
      id: randomUUID(),
      since,
      outcome,
      settle: (settled) => {
        if (sandbox.nextUp !== handOver) return;
        sandbox.nextUp = undefined;
        if (settled === 'returned') sandbox.pool.stats.givenBack++;
        resolve(settled);
      },
    };
    sandbox.nextUp = handOver;
    return handOver;
  }

  /** The invocation a sandbox ran has ended: whatever it paused or asked to be told is over. */
  private endTurn(sandbox: Sandbox) {
    this.setPaused(sandbox, false);
    sandbox.onPause = undefined;
    sandbox.waitingSince = 0;
  }

  /** The sandbox started the invocation handed over to it: it is now its current one, and the next may be handed over. */
  private promote(sandbox: Sandbox, id: string) {
    const handOver = sandbox.nextUp;
    if (handOver?.id !== id) return;
    this.endTurn(sandbox);
    sandbox.current = id;
    sandbox.busySince = performance.now();
    handOver.settle('started');
    this.handOver(sandbox);
  }

  /**
   * `pool` has a free sandbox: an invocation handed over to another of its
   * sandboxes, still busy, is asked back to run here (that sandbox's worker
   * gives it back if it has not started it yet).
   */
  private takeBackFor(pool: Pool) {
    for (const s of pool.sandboxes) {
      if (s.nextUp && s.state === 'busy') {
        s.worker.postMessage({ takeBack: s.nextUp.id });
        return;
      }
    }
  }

  /**
   * A sandbox that stops: what was handed over to it, unstarted, waits for a
   * sandbox again; every answer it still owes fails with `why`.
   */
  private abandon(sandbox: Sandbox, why: string) {
    this.giveBack(sandbox);
    for (const call of sandbox.pending.values()) {
      call.reject(new FunctionError(sandbox.spec.logicalId, 'Runtime.ExitError', why));
    }
    sandbox.pending.clear();
  }

  /** A sandbox that stops gives back the invocation handed over to it, unstarted: it waits for a sandbox again. */
  private giveBack(sandbox: Sandbox) {
    const handOver = sandbox.nextUp;
    if (!handOver) return;
    sandbox.pending.delete(handOver.id);
    handOver.settle('returned');
  }

  /** The function, other than `pool`'s, that has invocations waiting and no sandbox, started or starting. */
  private starvedPool(pool: Pool): Pool | undefined {
    for (const other of this.pools.values()) {
      if (other !== pool && other.queue.length > 0 && other.sandboxes.size === 0) return other;
    }
    return undefined;
  }

  /** Starts sandboxes for the invocations waiting in every function's queue, within the caps. */
  private fillAll() {
    for (const pool of this.pools.values()) this.fill(pool);
  }

  /**
   * Starts a sandbox for the invocations waiting in `pool`'s queue, within the caps, when worth it.
   * One start at a time, the next weighed when it is ready (see `start`): behind a slow (cold) first
   * invocation every queued one had waited, and a pool with none (its last sandbox given up for
   * another's room) counted an endless wait; either way one started for each.
   */
  private fill(pool: Pool) {
    if (pool.starting > 0) return;
    const oldest = this.oldestWaiting(pool);
    if (oldest === undefined) return;
    const serving = pool.sandboxes.size - this.lentRoom(pool);
    if (serving >= pool.cap || !this.belowCeiling) return;
    const waitMs = this.queueWaitMs(pool, serving, oldest);
    const atCap = this.workingCount >= this.maxSandboxes;
    const startAfterMs = atCap ? EVICT_AFTER_WAIT_MS : (this.options.startAfterWaitMs ?? START_AFTER_WAIT_MS);
    if (waitMs < startAfterMs) return this.fillLater(pool, startAfterMs - waitMs);
    if (atCap && !this.evictFor(pool)) return;
    this.start(pool);
  }

  /**
   * How long `pool`'s invocation waiting longest to start (arrived at
   * `oldest`: its queue's head, or one handed over to a busy sandbox; none
   * starting; `serving` sandboxes not lent) has waited, ms, counted from its
   * arrival or from when the pool's last start became ready, whichever is
   * later; infinite while no sandbox serves (then a sandbox starts at once).
   * So a pool grows by one sandbox at a time, each for a queue that has
   * lasted the threshold with the sandboxes it has. Not by what the queue
   * ahead would take to drain at the recent duration: a burst on a cold
   * sandbox reads as a long queue by that estimate, and behind a slow first
   * invocation every queued one had waited, which started a sandbox for
   * each, all as cold (see START_AFTER_WAIT_MS; a runtime test each).
   */
  private queueWaitMs(pool: Pool, serving: number, oldest: number): number {
    if (serving <= 0) return Number.POSITIVE_INFINITY;
    return performance.now() - Math.max(oldest, pool.grewAt);
  }

  /** When the invocation of `pool` waiting longest to start arrived: its queue's head, or one handed over. */
  private oldestWaiting(pool: Pool): number | undefined {
    let since = pool.queue[0]?.since;
    for (const s of pool.sandboxes) {
      if (s.nextUp && (since === undefined || s.nextUp.since < since)) since = s.nextUp.since;
    }
    return since;
  }

  /** Looks again at `pool`'s queue after `delayMs` (one timer per pool at a time). */
  private fillLater(pool: Pool, delayMs: number) {
    if (pool.fillTimer || this.stopped) return;
    pool.fillTimer = setTimeout(() => {
      pool.fillTimer = undefined;
      this.fill(pool);
    }, Math.ceil(delayMs) + 1);
    pool.fillTimer.unref();
  }

  /**
   * Makes room under the total cap for `pool`'s waiting invocations by
   * stopping another function's longest-idle sandbox (of one with nobody
   * waiting): one beyond its first at once, its last only once idle
   * LAST_SANDBOX_IDLE_MS (a function nobody calls goes cold, as on Lambda, so
   * a scheduled one does not hold room a busy one needs), and, while `pool`
   * has a sandbox of its own to serve its queue, none younger than
   * EVICTABLE_AFTER_MS. When only such sandboxes stand in the way, the room
   * is looked for again once they are old enough. (Measured: also sparing
   * sandboxes beyond the first until idle 500 ms starved the saga's steps
   * behind the busy APIs.)
   */
  private evictFor(pool: Pool): boolean {
    const now = performance.now();
    const lastIdleMs = this.options.lastSandboxIdleMs ?? LAST_SANDBOX_IDLE_MS;
    // A function with no sandbox at all is never kept waiting for others' young ones.
    const evictableAfterMs =
      pool.sandboxes.size > 0 ? (this.options.evictableAfterMs ?? EVICTABLE_AFTER_MS) : 0;
    let victim: Sandbox | undefined;
    let soonest = Number.POSITIVE_INFINITY;
    for (const other of this.pools.values()) {
      if (other === pool || other.queue.length > 0) continue;
      for (const s of other.idle) {
        const wait = Math.max(
          other.sandboxes.size <= 1 ? lastIdleMs - (now - s.idleSince) : 0,
          evictableAfterMs - (now - s.startedAt),
        );
        if (wait > 0) soonest = Math.min(soonest, wait);
        else if (!victim || s.idleSince < victim.idleSince) victim = s;
      }
    }
    if (!victim) {
      if (Number.isFinite(soonest)) this.refillLater(soonest);
      return false;
    }
    victim.pool.stats.reclaimed++;
    this.stopSandbox(victim, false);
    return true;
  }

  /** Looks for room again for the functions that wait, after `delayMs` (one timer at a time). */
  private refillLater(delayMs: number) {
    if (this.refillTimer || this.stopped) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.fillAll();
    }, Math.ceil(delayMs) + 1);
    this.refillTimer.unref();
  }

  private stopSandbox(sandbox: Sandbox, refill = true) {
    this.remove(sandbox, refill);
    void sandbox.worker.terminate();
  }

  private reclaimIdle(idleMs: number) {
    const now = performance.now();
    for (const pool of this.pools.values()) {
      for (const sandbox of [...pool.idle]) {
        if (pool.sandboxes.size <= 1) break;
        if (now - sandbox.idleSince < idleMs) continue;
        pool.stats.reclaimed++;
        this.stopSandbox(sandbox);
      }
    }
  }

  /**
   * Waits for a sandbox of `pool` that is free, starting one if the caps allow; with `maxWaitMs`, at
   * most that long, after which the invocation leaves the queue, refused as throttled.
   */
  private acquire(
    pool: Pool,
    maxWaitMs: number | undefined,
    since: number,
    returned: boolean,
  ): Promise<Turn> {
    if (this.stopped) {
      return Promise.reject(
        new FunctionError(pool.spec.logicalId, 'Runtime.ExitError', 'the local cloud is stopping'),
      );
    }
    const idle = pool.idle.pop();
    if (idle) {
      idle.state = 'busy';
      return Promise.resolve({ sandbox: idle });
    }
    const bounded = maxWaitMs !== undefined;
    // Nobody ahead of it (or given back, so first again): a busy sandbox may take it next (see handOver).
    const target = !bounded && (returned || pool.queue.length === 0) ? this.handOverTarget(pool) : undefined;
    if (target) {
      const handOver = this.holdNext(target, since);
      // It waits as a queued invocation does: should its sandbox's invocation last, the pool grows for it.
      this.fill(pool);
      return Promise.resolve({ sandbox: target, handOver });
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { since, bounded, grant: resolve, fail: reject };
      if (maxWaitMs !== undefined) {
        const deadline = setTimeout(() => {
          const at = pool.queue.indexOf(waiter);
          if (at < 0) return;
          pool.queue.splice(at, 1);
          pool.stats.queueTimeouts++;
          reject(new QueueWaitExceeded(pool.spec.logicalId, maxWaitMs));
        }, maxWaitMs);
        deadline.unref();
        waiter.grant = (turn) => {
          clearTimeout(deadline);
          resolve(turn);
        };
        waiter.fail = (error) => {
          clearTimeout(deadline);
          reject(error);
        };
      }
      if (returned) pool.queue.unshift(waiter);
      else pool.queue.push(waiter);
      pool.stats.mostQueued = Math.max(pool.stats.mostQueued, pool.queue.length - pool.starting);
      this.fill(pool);
    });
  }

  /**
   * Stops a sandbox whose invocation timed out (Lambda resets such an
   * environment): it takes no other invocation. It is stopped once it
   * answers a last `flush` message, or after 1 s: the round trip lets the
   * worker's answer to `takeBack`, sent before it, arrive first.
   */
  private retire(sandbox: Sandbox) {
    sandbox.pool.stats.replacedAfterTimeout++;
    this.remove(sandbox);
    // Asked back first: the worker gives it back, unless the invocation ahead answered within its deadline
    // just as it timed out here and the worker started the next (which then fails as in a crashed sandbox).
    if (sandbox.nextUp) sandbox.worker.postMessage({ takeBack: sandbox.nextUp.id });
    const id = randomUUID();
    const stop = () => {
      sandbox.pending.delete(id);
      this.abandon(sandbox, 'sandbox stopped after a timeout');
      void sandbox.worker.terminate();
    };
    const timer = setTimeout(stop, 1_000);
    sandbox.pending.set(id, {
      resolve: () => {
        clearTimeout(timer);
        stop();
      },
      reject: () => clearTimeout(timer),
    });
    sandbox.worker.postMessage({ id, flush: true });
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
    const pool = this.pools.get(functionId);
    if (!pool) throw new Error(`no local function ${functionId}`);
    const { spec } = pool;
    if (spec.reservedConcurrency !== undefined && pool.admitted >= spec.reservedConcurrency) {
      throw new FunctionError(functionId, THROTTLED_ERROR, 'Rate Exceeded.');
    }
    pool.admitted++;
    const arrived = performance.now();
    let started = arrived;
    let ok = false;
    let timedOut = false;
    let sandbox: Sandbox | undefined;
    let id = '';
    let pausedBefore = 0;
    let timer: NodeJS.Timeout | undefined;
    try {
      let returned = false;
      let turn: Turn;
      let answer: Promise<unknown>;
      for (;;) {
        turn = await this.acquire(pool, options.maxQueueWaitMs, arrived, returned);
        const running = turn.sandbox;
        id = turn.handOver?.id ?? randomUUID();
        const context = {
          functionName: functionId,
          functionVersion: '$LATEST',
          invokedFunctionArn: `arn:aws:lambda:${REGION}:000000000000:function:${functionId}`,
          memoryLimitInMB: String(spec.memoryMb),
          awsRequestId: id,
          logGroupName: `/aws/lambda/${functionId}`,
          logStreamName: `local/${running.id}`,
          // A handed-over invocation's deadline is set by the sandbox when it starts it.
          deadlineMs: Date.now() + spec.timeoutMs,
        };
        answer = new Promise<unknown>((resolve, reject) => running.pending.set(id, { resolve, reject }));
        // Settled only once it has started: a sandbox that gives it back or stops first never runs it.
        answer.catch(() => undefined);
        if (!turn.handOver) {
          running.current = id;
          running.busySince = performance.now();
          running.onPause = options.onPause;
          running.pausedMs = 0;
        }
        running.worker.postMessage({
          id,
          event,
          context,
          handOver: turn.handOver !== undefined,
          timeoutMs: spec.timeoutMs,
        });
        if (!turn.handOver || (await turn.handOver.outcome) === 'started') break;
        running.pending.delete(id);
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
      const result = await Promise.race([answer, timeout]);
      ok = true;
      return result;
    } finally {
      clearTimeout(timer);
      pool.admitted--;
      if (sandbox) {
        // The time it only waited (paused) is billed, as on Lambda, but is not the function's work: the recent
        // duration, which admission reads as how fast the function drains its queue, leaves it out.
        if (sandbox.current === id) this.setPaused(sandbox, false);
        const pausedMs = sandbox.pausedMs - pausedBefore;
        if (timedOut && sandbox.state === 'busy' && sandbox.current === id) this.retire(sandbox);
        else this.release(sandbox, id);
        const durationMs = performance.now() - started;
        const workMs = Math.max(0, durationMs - pausedMs);
        // A sandbox's first invocation (modules, JIT and connections still cold) says little of the next.
        if (sandbox.invocations > 1) pool.recent.add(workMs);
        const record = { functionName: functionId, memoryMb: spec.memoryMb, durationMs, ok };
        for (const listener of this.listeners) listener(record);
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
    const pool = this.pools.get(functionId);
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
    const pool = this.pools.get(functionId);
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
    return Object.fromEntries(
      [...this.pools].map(([functionId, pool]) => [
        functionId,
        {
          cap: pool.cap,
          sandboxes: pool.sandboxes.size,
          busy: [...pool.sandboxes].filter((s) => s.state === 'busy').length,
          paused: pool.paused,
          queued: Math.max(0, pool.queue.length),
          recentMs: pool.recent.ms === undefined ? undefined : Math.round(pool.recent.ms * 10) / 10,
          ...pool.stats,
          startCpuMs: Math.round(pool.stats.startCpuMs),
          invocationCpuMs: Math.round(pool.stats.invocationCpuMs),
        },
      ]),
    );
  }

  /** Each function's sandboxes' heap, summed, in MiB (what a function holds onto between invocations). */
  async memory(): Promise<Record<string, { heapUsedMb: number; heapTotalMb: number; sandboxes: number }>> {
    const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
    const entries = await Promise.all(
      [...this.pools].map(async ([functionId, pool]) => {
        const usages = await Promise.all(
          [...pool.sandboxes]
            .filter((s) => s.state !== 'starting')
            .map((sandbox) =>
              new Promise<{ heapUsed: number; heapTotal: number }>((resolve, reject) => {
                const id = randomUUID();
                sandbox.pending.set(id, {
                  resolve: (value) => resolve(value as { heapUsed: number; heapTotal: number }),
                  reject,
                });
                sandbox.worker.postMessage({ id, memory: true });
              }).catch(() => ({ heapUsed: 0, heapTotal: 0 })),
            ),
        );
        if (usages.length === 0) return undefined;
        const sum = (k: 'heapUsed' | 'heapTotal') => usages.reduce((n, u) => n + u[k], 0);
        return [
          functionId,
          { heapUsedMb: mb(sum('heapUsed')), heapTotalMb: mb(sum('heapTotal')), sandboxes: usages.length },
        ] as const;
      }),
    );
    return Object.fromEntries(entries.filter((e) => e !== undefined));
  }

  async stop() {
    this.stopped = true;
    clearInterval(this.reaper);
    clearTimeout(this.refillTimer);
    const workers: Worker[] = [];
    for (const pool of this.pools.values()) {
      clearTimeout(pool.fillTimer);
      for (const waiter of pool.queue.splice(0)) {
        waiter.fail(
          new FunctionError(pool.spec.logicalId, 'Runtime.ExitError', 'the local cloud is stopping'),
        );
      }
      for (const sandbox of pool.sandboxes) {
        sandbox.state = 'stopped';
        this.giveBack(sandbox);
        workers.push(sandbox.worker);
      }
      pool.sandboxes.clear();
      pool.idle.length = 0;
    }
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
