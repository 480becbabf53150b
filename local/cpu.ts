import type { LambdaRuntime } from './lambda/runtime';

/** CPU time, ms, by where it went. */
export interface CpuTimes {
  /** This process's main thread: the HTTP API, Step Functions, the stream pollers, EventBridge. */
  readonly mainThreadMs: number;
  /** The function sandboxes' threads while they start (worker and bundle loaded). */
  readonly sandboxStartMs: number;
  /** The function sandboxes' threads while they run invocations. */
  readonly sandboxInvocationMs: number;
  /** The rest of this process: V8's garbage collector and compiler threads, libuv's pool. */
  readonly otherThreadsMs: number;
  /** The DynamoDB engine's calls, timed as they run on the main thread (a part of mainThreadMs). */
  readonly dynamodbMs: number;
}

const ms = ({ user, system }: NodeJS.CpuUsage) => (user + system) / 1000;

/**
 * Where the local cloud's CPU time goes, since the last reset: what the load
 * report divides by the transactions of a level to say where each one's time
 * went (on a 2-core machine, CPU per transaction is what bounds throughput).
 */
export class CpuMeter {
  private base: CpuTimes;

  constructor(
    private readonly runtime: LambdaRuntime,
    private readonly engine: { readonly busyMs: number },
  ) {
    this.base = this.now();
  }

  private now(): CpuTimes {
    const pools = Object.values(this.runtime.sandboxes());
    const sandboxStartMs = pools.reduce((sum, pool) => sum + pool.startCpuMs, 0);
    const sandboxInvocationMs = pools.reduce((sum, pool) => sum + pool.invocationCpuMs, 0);
    const mainThreadMs = ms(process.threadCpuUsage());
    return {
      mainThreadMs,
      sandboxStartMs,
      sandboxInvocationMs,
      otherThreadsMs: ms(process.cpuUsage()) - mainThreadMs - sandboxStartMs - sandboxInvocationMs,
      dynamodbMs: this.engine.busyMs,
    };
  }

  reset() {
    this.base = this.now();
  }

  /** CPU time since the last reset, ms, rounded. */
  sinceReset(): CpuTimes {
    const now = this.now();
    const since = (key: keyof CpuTimes) => Math.round(now[key] - this.base[key]);
    return {
      mainThreadMs: since('mainThreadMs'),
      sandboxStartMs: since('sandboxStartMs'),
      sandboxInvocationMs: since('sandboxInvocationMs'),
      otherThreadsMs: since('otherThreadsMs'),
      dynamodbMs: since('dynamodbMs'),
    };
  }
}
