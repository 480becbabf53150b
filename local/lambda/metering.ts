/**
 * What the runtime measures of its functions: each invocation's duration
 * (billed, and its work without pauses for the recent duration), its
 * sandboxes' CPU and heap, and each pool's counters.
 */
import { randomUUID } from 'node:crypto';
import type { FunctionSpec } from './function-spec';
import type { Pool, RuntimeState } from './pools';
import type { Sandbox } from './sandbox';

export interface InvocationRecord {
  readonly functionName: string;
  readonly memoryMb: number;
  readonly durationMs: number;
  readonly ok: boolean;
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

export function newPoolStats(): PoolStats {
  return {
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
  };
}

/**
 * Counts an invocation that ran in `sandbox` from `started` (performance.now()) until now, `pausedMs`
 * of it paused, into its pool's recent duration, and tells the listeners.
 */
export function meterInvocation(
  runtime: RuntimeState,
  pool: Pool,
  sandbox: Sandbox,
  spec: FunctionSpec,
  started: number,
  pausedMs: number,
  ok: boolean,
) {
  const durationMs = performance.now() - started;
  const workMs = Math.max(0, durationMs - pausedMs);
  // A sandbox's first invocation (modules, JIT and connections still cold) says little of the next.
  if (sandbox.invocations > 1) pool.recent.add(workMs);
  const record = { functionName: spec.logicalId, memoryMb: spec.memoryMb, durationMs, ok };
  for (const listener of runtime.listeners) listener(record);
}

/** Each function's pool: its cap, sandboxes, queue and counters. */
export function sandboxReport(runtime: RuntimeState) {
  return Object.fromEntries(
    [...runtime.pools].map(([functionId, pool]) => [
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
export async function memoryReport(
  runtime: RuntimeState,
): Promise<Record<string, { heapUsedMb: number; heapTotalMb: number; sandboxes: number }>> {
  const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
  const entries = await Promise.all(
    [...runtime.pools].map(async ([functionId, pool]) => {
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
