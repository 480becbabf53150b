import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type Assembly, REGION, type Resolve, resourcesOfType } from '../assembly';

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

export interface InvocationRecord {
  readonly functionName: string;
  readonly memoryMb: number;
  readonly durationMs: number;
  readonly ok: boolean;
}

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
}

interface Sandbox {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
  /** Invocations running in the sandbox now, and those waiting for a turn. */
  running: number;
  waiting: (() => void)[];
}

/**
 * How many invocations one sandbox runs at once; more wait their turn. On
 * Lambda each concurrent invocation has a sandbox of its own and runs at full
 * speed; here they share one thread, so without this bound a burst of
 * hundreds would all slow down together until every one passed its timeout.
 * The timeout (and the billed duration) counts from an invocation's turn, as
 * on Lambda it counts from the sandbox taking it.
 */
export const SANDBOX_CONCURRENCY = 32;

/**
 * Runs each function in its own worker thread (its own process.env and module
 * state, like a Lambda sandbox), started on first use. Concurrent invocations
 * of one function share its sandbox, as Node's event loop allows; the timeout
 * from the template is enforced on each invocation.
 */
export class LambdaRuntime {
  private readonly sandboxes = new Map<string, Sandbox>();
  readonly specs: ReadonlyMap<string, FunctionSpec>;
  private readonly listeners: ((record: InvocationRecord) => void)[] = [];

  constructor(
    specs: readonly FunctionSpec[],
    private readonly logDir: string,
    private readonly echoLogs = false,
  ) {
    this.specs = new Map(specs.map((s) => [s.logicalId, s]));
    mkdirSync(logDir, { recursive: true });
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

  /** Starts every sandbox now rather than on first use (so the first request is not a cold start). */
  async warmAll() {
    await this.warm([...this.specs.keys()]);
  }

  /** Starts the sandboxes of `functionIds` (if not started yet) and waits until they are ready. */
  async warm(functionIds: Iterable<string>) {
    await Promise.all([...new Set(functionIds)].map((id) => this.sandbox(id).ready));
  }

  private sandbox(functionId: string): Sandbox {
    const existing = this.sandboxes.get(functionId);
    if (existing) return existing;
    const spec = this.specs.get(functionId)!;
    const worker = new Worker(join(__dirname, 'worker.js'), {
      // Echoing means the parent's output, so the worker's must come through the parent.
      workerData: {
        codeDir: spec.codeDir,
        handler: spec.handler,
        ...(this.echoLogs ? {} : { logFile: join(this.logDir, `${functionId}.log`) }),
      },
      env: spec.environment,
      // Not the TypeScript loader the local cloud itself runs under: the sandbox runs plain bundles.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: Math.min(spec.memoryMb, 512) },
    });
    const pending: Sandbox['pending'] = new Map();
    let markReady: () => void;
    let failStart: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    worker.on('message', (message: WorkerMessage) => {
      if (message.ready) return markReady();
      const call = pending.get(message.id!);
      if (!call) return;
      pending.delete(message.id!);
      if (message.error) {
        const e = message.error;
        call.reject(new FunctionError(functionId, e.errorType, e.errorMessage, e.trace));
      } else call.resolve(message.result == null ? null : JSON.parse(message.result));
    });
    const crash = (error: Error) => {
      this.sandboxes.delete(functionId);
      failStart(error);
      for (const call of pending.values()) {
        call.reject(new FunctionError(functionId, 'Runtime.ExitError', `sandbox stopped: ${error.message}`));
      }
      pending.clear();
    };
    worker.on('error', crash);
    worker.on('exit', (code) => crash(new Error(`worker exited with code ${code}`)));
    const sandbox: Sandbox = { worker, ready, pending, running: 0, waiting: [] };
    this.sandboxes.set(functionId, sandbox);
    return sandbox;
  }

  /** Invokes a function with `event` and resolves with its result, or rejects with a FunctionError. */
  async invoke(functionId: string, event: unknown): Promise<unknown> {
    const spec = this.specs.get(functionId);
    if (!spec) throw new Error(`no local function ${functionId}`);
    const sandbox = this.sandbox(functionId);
    await sandbox.ready;
    const concurrent = sandbox.running + sandbox.waiting.length;
    if (spec.reservedConcurrency !== undefined && concurrent >= spec.reservedConcurrency) {
      throw new FunctionError(functionId, THROTTLED_ERROR, 'Rate Exceeded.');
    }
    if (sandbox.running < SANDBOX_CONCURRENCY) sandbox.running++;
    else await new Promise<void>((turn) => sandbox.waiting.push(turn));
    const id = randomUUID();
    const started = performance.now();
    const context = {
      functionName: functionId,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:${REGION}:000000000000:function:${functionId}`,
      memoryLimitInMB: String(spec.memoryMb),
      awsRequestId: id,
      logGroupName: `/aws/lambda/${functionId}`,
      logStreamName: 'local',
      deadlineMs: Date.now() + spec.timeoutMs,
    };
    let timer: NodeJS.Timeout | undefined;
    let ok = false;
    try {
      const result = await new Promise((resolve, reject) => {
        sandbox.pending.set(id, { resolve, reject });
        timer = setTimeout(() => {
          sandbox.pending.delete(id);
          reject(
            new FunctionError(
              functionId,
              'Sandbox.Timedout',
              `Task timed out after ${spec.timeoutMs / 1000} seconds`,
            ),
          );
        }, spec.timeoutMs);
        sandbox.worker.postMessage({ id, event, context });
      });
      ok = true;
      return result;
    } finally {
      clearTimeout(timer);
      // The turn passes straight to the next waiting invocation, if any.
      const next = sandbox.waiting.shift();
      if (next) next();
      else sandbox.running--;
      const record = {
        functionName: functionId,
        memoryMb: spec.memoryMb,
        durationMs: performance.now() - started,
        ok,
      };
      for (const listener of this.listeners) listener(record);
    }
  }

  /** Each running sandbox's heap, in MiB (what a function holds onto between invocations). */
  async memory(): Promise<Record<string, { heapUsedMb: number; heapTotalMb: number }>> {
    const entries = await Promise.all(
      [...this.sandboxes].map(async ([functionId, sandbox]) => {
        await sandbox.ready;
        const id = randomUUID();
        const usage = (await new Promise<unknown>((resolve, reject) => {
          sandbox.pending.set(id, { resolve, reject });
          sandbox.worker.postMessage({ id, memory: true });
        })) as { heapUsed: number; heapTotal: number };
        const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
        return [functionId, { heapUsedMb: mb(usage.heapUsed), heapTotalMb: mb(usage.heapTotal) }] as const;
      }),
    );
    return Object.fromEntries(entries);
  }

  async stop() {
    const workers = [...this.sandboxes.values()].map((s) => s.worker);
    this.sandboxes.clear();
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
