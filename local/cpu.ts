import { readFileSync } from 'node:fs';
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
  /** DynamoDB Local's JVM (absent where /proc cannot be read). */
  readonly dynamodbLocalMs?: number;
}

const ms = ({ user, system }: NodeJS.CpuUsage) => (user + system) / 1000;

/** A process's CPU time, ms, from /proc/<pid>/stat (utime + stime, in clock ticks of 10 ms), or undefined. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Where the local cloud's CPU time goes, since the last reset: what the load
 * report divides by the transactions of a level to say where each one's time
 * went (on a 2-core machine, CPU per transaction is what bounds throughput).
 */
export class CpuMeter {
  private base: CpuTimes;

  constructor(
    private readonly runtime: LambdaRuntime,
    private readonly dynamodbLocalPid: number,
  ) {
    this.base = this.now();
  }

  private now(): CpuTimes {
    const pools = Object.values(this.runtime.sandboxes());
    const sandboxStartMs = pools.reduce((sum, pool) => sum + pool.startCpuMs, 0);
    const sandboxInvocationMs = pools.reduce((sum, pool) => sum + pool.invocationCpuMs, 0);
    const mainThreadMs = ms(process.threadCpuUsage());
    const dynamodbLocalMs = processCpuMs(this.dynamodbLocalPid);
    return {
      mainThreadMs,
      sandboxStartMs,
      sandboxInvocationMs,
      otherThreadsMs: ms(process.cpuUsage()) - mainThreadMs - sandboxStartMs - sandboxInvocationMs,
      ...(dynamodbLocalMs === undefined ? {} : { dynamodbLocalMs }),
    };
  }

  reset() {
    this.base = this.now();
  }

  /** CPU time since the last reset, ms, rounded. */
  sinceReset(): CpuTimes {
    const now = this.now();
    const since = (key: keyof CpuTimes) => Math.round((now[key] ?? 0) - (this.base[key] ?? 0));
    return {
      mainThreadMs: since('mainThreadMs'),
      sandboxStartMs: since('sandboxStartMs'),
      sandboxInvocationMs: since('sandboxInvocationMs'),
      otherThreadsMs: since('otherThreadsMs'),
      ...(now.dynamodbLocalMs === undefined ? {} : { dynamodbLocalMs: since('dynamodbLocalMs') }),
    };
  }
}
