/**
 * A sandbox's life: its worker thread started, ready, sent invocations and
 * answering them, and stopped (reclaimed, replaced after a timeout, or
 * crashed), failing whatever it still owes.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { REGION } from '../assembly';
import type { Turn } from './admission';
import { FunctionError } from './errors';
import { type FunctionSpec, nodeOptions } from './function-spec';
import { type HandOver, promote } from './hand-over';
import { setPaused } from './pauses';
import { fill } from './pool-growth';
import { type Pool, type RuntimeState, release } from './pools';

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

/** An answer a sandbox owes. */
interface Call {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** One execution environment: a worker thread that runs one invocation at a time. */
export interface Sandbox {
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
 * A sandbox's young generation (V8's space for new objects), MiB. V8 sizes
 * it from the old generation's limit (up to 512 MB here) and grows it while
 * much survives, and a dozen isolates each keep theirs. Measured at 20/s on
 * 64-shard products: the local cloud's process peaked at 542–568 MB with 12
 * (two runs) against 695–729 MB with V8's sizing (six runs); CPU per
 * transaction, 63–71 ms against 35–84, within that day's noise.
 */
const SANDBOX_YOUNG_GENERATION_MB = 12;

/** Starts a sandbox of `pool`: it is `starting` until its worker has loaded the handler. */
export function startSandbox(runtime: RuntimeState, pool: Pool): Sandbox {
  const { spec } = pool;
  const functionId = spec.logicalId;
  const worker = new Worker(join(__dirname, 'worker.js'), {
    // Echoing means the parent's output, so the worker's must come through the parent.
    workerData: {
      codeDir: spec.codeDir,
      handler: spec.handler,
      // In the runtime's directory: the sandboxes of one cloud share it.
      compileCacheDir: join(runtime.logDir, '.compile-cache'),
      ...(runtime.options.echoLogs ? {} : { logFile: join(runtime.logDir, `${functionId}.log`) }),
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
  let markReady!: () => void;
  let failStart!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failStart = reject;
  });
  // A start failure is reported to whoever waits on it; nobody waiting is not an unhandled rejection.
  ready.catch(() => undefined);
  const startedAt = performance.now();
  const sandbox: Sandbox = {
    id: ++runtime.nextId,
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
  worker.on('message', messageListener(runtime, sandbox, markReady));
  const crash = crashListener(runtime, sandbox, failStart);
  worker.on('error', crash);
  worker.on('exit', (code) => crash(new Error(`worker exited with code ${code}`)));
  return sandbox;
}

/** What a sandbox's worker says: it is ready, pauses or resumes, answers, or gives back what was handed over. */
function messageListener(runtime: RuntimeState, sandbox: Sandbox, markReady: () => void) {
  const { pool } = sandbox;
  const functionId = sandbox.spec.logicalId;
  return (message: WorkerMessage) => {
    if (message.pausing !== undefined) {
      if (sandbox.state === 'busy') setPaused(runtime, sandbox, message.pausing);
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
      release(runtime, sandbox);
      fill(runtime, pool);
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
    if (message.startedNext !== undefined) promote(runtime, sandbox, message.startedNext);
  };
}

/** A sandbox whose worker failed or exited: it leaves its pool, and what waits on it learns why. */
function crashListener(runtime: RuntimeState, sandbox: Sandbox, failStart: (error: Error) => void) {
  const { pool } = sandbox;
  return (error: Error) => {
    if (sandbox.state === 'stopped') return;
    if (sandbox.state === 'starting') {
      pool.starting--;
      // The start failed (the handler's module threw, say): the oldest waiting invocation learns why.
      pool.queue.shift()?.fail(error);
    } else pool.stats.crashed++;
    failStart(error);
    removeSandbox(runtime, sandbox);
    abandon(sandbox, `sandbox stopped: ${error.message}`);
  };
}

/**
 * Takes a sandbox out of its pool for good, and (unless `refill` is false:
 * the caller takes the room itself) lets waiting invocations start
 * sandboxes in its place.
 */
function removeSandbox(runtime: RuntimeState, sandbox: Sandbox, refill = true) {
  const { pool } = sandbox;
  setPaused(runtime, sandbox, false);
  sandbox.state = 'stopped';
  pool.sandboxes.delete(sandbox);
  const at = pool.idle.indexOf(sandbox);
  if (at >= 0) pool.idle.splice(at, 1);
  if (runtime.stopped || !refill) return;
  fill(runtime, pool);
  for (const other of runtime.pools.values()) if (other !== pool) fill(runtime, other);
}

/**
 * Stops a sandbox whose invocation timed out (Lambda resets such an
 * environment): it takes no other invocation. It is stopped once it
 * answers a last `flush` message, or after 1 s: the round trip lets the
 * worker's answer to `takeBack`, sent before it, arrive first.
 */
export function retire(runtime: RuntimeState, sandbox: Sandbox) {
  sandbox.pool.stats.replacedAfterTimeout++;
  removeSandbox(runtime, sandbox);
  // Asked back first: the worker gives it back, unless the invocation ahead answered within its deadline
  // just as it timed out here and the worker started the next (which then fails as in a crashed sandbox).
  if (sandbox.nextUp) sandbox.worker.postMessage({ takeBack: sandbox.nextUp.id });
  const id = randomUUID();
  const stop = () => {
    sandbox.pending.delete(id);
    abandon(sandbox, 'sandbox stopped after a timeout');
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
 * Kills a sandbox as its runtime process dying would (a fault injected, see function-deaths.ts): it
 * leaves its pool, and every answer it still owes, its current invocation's included, fails with
 * Lambda's `Runtime.ExitError`.
 */
export function killSandbox(runtime: RuntimeState, sandbox: Sandbox, why: string) {
  if (sandbox.state === 'stopped') return;
  sandbox.pool.stats.crashed++;
  removeSandbox(runtime, sandbox);
  abandon(sandbox, why);
  void sandbox.worker.terminate();
}

export function stopSandbox(runtime: RuntimeState, sandbox: Sandbox, refill = true) {
  removeSandbox(runtime, sandbox, refill);
  void sandbox.worker.terminate();
}

/**
 * A sandbox that stops: what was handed over to it, unstarted, waits for a
 * sandbox again; every answer it still owes fails with `why`.
 */
function abandon(sandbox: Sandbox, why: string) {
  giveBack(sandbox);
  for (const call of sandbox.pending.values()) {
    call.reject(new FunctionError(sandbox.spec.logicalId, 'Runtime.ExitError', why));
  }
  sandbox.pending.clear();
}

/** A sandbox that stops gives back the invocation handed over to it, unstarted: it waits for a sandbox again. */
export function giveBack(sandbox: Sandbox) {
  const handOver = sandbox.nextUp;
  if (!handOver) return;
  sandbox.pending.delete(handOver.id);
  handOver.settle('returned');
}

/**
 * Sends invocation `id` of `event` to the sandbox of `turn` and resolves with its answer. A free sandbox
 * runs it now (it becomes its current invocation); one it is handed over to starts it after the one it runs.
 */
export function sendInvocation(
  turn: Turn,
  id: string,
  functionId: string,
  spec: FunctionSpec,
  event: unknown,
  onPause: (() => void) | undefined,
): Promise<unknown> {
  const running = turn.sandbox;
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
  const answer = new Promise<unknown>((resolve, reject) => running.pending.set(id, { resolve, reject }));
  // Settled only once it has started: a sandbox that gives it back or stops first never runs it.
  answer.catch(() => undefined);
  if (!turn.handOver) {
    running.current = id;
    running.busySince = performance.now();
    running.onPause = onPause;
    running.pausedMs = 0;
  }
  running.worker.postMessage({
    id,
    event,
    context,
    handOver: turn.handOver !== undefined,
    timeoutMs: spec.timeoutMs,
  });
  return answer;
}
