/**
 * Admission of a function's invocations: refused beyond its reserved
 * concurrency, else given a sandbox (an idle one, a busy one to start it
 * next, or one started for it) or queued, within a bound when the caller
 * sets one.
 */
import { FunctionError, QueueWaitExceeded, THROTTLED_ERROR } from './errors';
import { type HandOver, handOverTarget, holdNext } from './hand-over';
import { fill } from './pool-growth';
import type { Pool, RuntimeState } from './pools';
import type { Sandbox } from './sandbox';

/** What an invocation waiting for a sandbox is given: the sandbox, free, or busy with the turn after its invocation. */
export interface Turn {
  readonly sandbox: Sandbox;
  readonly handOver?: HandOver;
}

export interface Waiter {
  /** When it joined the queue (performance.now()). */
  since: number;
  /** It may wait only so long (an HTTP API request's bound): it is never handed over (see `handOver`). */
  readonly bounded: boolean;
  grant: (turn: Turn) => void;
  fail: (error: Error) => void;
}

/** Admits an invocation of `pool`'s function, or refuses it as throttled when its reserved concurrency is taken. */
export function admit(pool: Pool, functionId: string) {
  const { spec } = pool;
  if (spec.reservedConcurrency !== undefined && pool.admitted >= spec.reservedConcurrency) {
    throw new FunctionError(functionId, THROTTLED_ERROR, 'Rate Exceeded.');
  }
  pool.admitted++;
}

/**
 * Waits for a sandbox of `pool` that is free, starting one if the caps allow; with `maxWaitMs`, at
 * most that long, after which the invocation leaves the queue, refused as throttled.
 */
export function acquire(
  runtime: RuntimeState,
  pool: Pool,
  maxWaitMs: number | undefined,
  since: number,
  returned: boolean,
): Promise<Turn> {
  if (runtime.stopped) {
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
  const target =
    !bounded && (returned || pool.queue.length === 0) ? handOverTarget(runtime, pool) : undefined;
  if (target) {
    const handOver = holdNext(target, since);
    // It waits as a queued invocation does: should its sandbox's invocation last, the pool grows for it.
    fill(runtime, pool);
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
    fill(runtime, pool);
  });
}
