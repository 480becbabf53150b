/**
 * The target as the runner sees it outside Artillery: the platform's HTTP API
 * (for seeding and the invariant checks) and, for a local cloud, its admin
 * routes on the AWS endpoint (counters and memory).
 */
import type { CpuTimes } from '@commerce/local-cloud';
import { bearer, tokensFor } from './tokens';

export interface Target {
  /** The API's base URL, e.g. http://127.0.0.1:3000 or a stage's https URL. */
  readonly api: string;
  /** The local cloud's AWS endpoint; absent for a deployed stage (no counters there). */
  readonly awsEndpoint?: string;
}

export interface JsonResponse<T> {
  readonly status: number;
  readonly body: T;
}

/**
 * A request to the API, as the operator (an admin token from the target's issuer) unless `headers`
 * carry an `authorization` of their own (a customer's: its orders, its idempotency keys).
 */
export async function request<T = Record<string, unknown>>(
  target: Target,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  if (!headers.authorization) headers = { ...headers, ...bearer(await tokensFor(target).admin()) };
  let throttled = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(`${target.api}${path}`, {
        method,
        signal: AbortSignal.timeout(15_000),
        ...(body === undefined
          ? { headers }
          : { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await response.text();
      // Refused for load (the target still working off a backlog, or warming up): asked again after its
      // Retry-After, as the contract's 429 asks a client to.
      if (response.status === 429 && throttled < THROTTLED_ATTEMPTS) {
        throttled++;
        attempt--;
        await sleep(retryAfterMs(response));
        continue;
      }
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
    } catch (error) {
      // The checks read after a load, from a target that may still be working off its backlog: a
      // request dropped or unanswered is retried, four times, with growing pauses.
      if (attempt >= 5) throw new Error(`${method} ${path}: ${(error as Error).message}`);
      await sleep(2000 * attempt);
    }
  }
}

/** How many times a request refused for load (429) is sent again before its refusal is returned. */
export const THROTTLED_ATTEMPTS = 20;

/** The pause a 429 asks for (its Retry-After in seconds), 1 s if it names none, at most 10 s. */
export function retryAfterMs(response: Response): number {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) * 1000 : 1000;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` over `items` with at most `concurrency` at a time, results in order. */
export async function mapPool<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>) {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!);
      }
    }),
  );
  return results;
}

async function admin<T>(target: Target, path: string): Promise<T | undefined> {
  if (!target.awsEndpoint) return undefined;
  const response = await fetch(`${target.awsEndpoint}/_local/${path}`, {
    signal: AbortSignal.timeout(15_000),
  });
  if (!response.ok) throw new Error(`GET /_local/${path} on ${target.awsEndpoint}: ${response.status}`);
  return (await response.json()) as T;
}

/**
 * The local cloud's counters (GET /_local/stats). Every field the report reads is optional: a local
 * cloud that does not count something yet leaves it out, and the report says "n/a".
 */
export interface LocalStats {
  readonly seconds?: number;
  readonly requests?: Record<string, { count: number; p95?: number; statuses?: Record<string, number> }>;
  readonly invocations?: Record<
    string,
    { count: number; billedMs?: number; memoryMb?: number; errors?: number; p95?: number }
  >;
  readonly reads?: Record<string, Record<string, number>>;
  readonly writes?: Record<string, TableWrites>;
  readonly dynamodb?: Record<
    string,
    {
      readUnits?: number;
      writeUnits?: number;
      transactionalReadUnits?: number;
      transactionalWriteUnits?: number;
    }
  >;
  readonly eventBridge?: { putEvents?: number; events?: number; matched?: number; deliveries?: number };
  readonly stepFunctions?: {
    executions?: number;
    succeeded?: number;
    failed?: number;
    stateTransitions?: number;
    taskInvocations?: number;
    billedExpressMs?: number;
    running?: number;
  };
  readonly deadLetters?: Record<string, number>;
  /** CPU time since the reset, ms. */
  readonly cpu?: CpuTimes;
}

/** One table's item writes as the local cloud's hot-key meter counts them (per partition key). */
export interface TableWrites {
  readonly itemWrites: number;
  readonly distinctKeys: number;
  readonly operations?: Record<string, number>;
  /** The five keys with the most writes, and each one's share of the table's writes. */
  readonly hottestKeys: readonly KeyWrites[];
  /** The second with the most writes to the table, and its hottest key's share of that second. */
  readonly busiestSecond?: SecondOfWrites;
  /** The second in which one key took the most writes. */
  readonly peakKeySecond?: SecondOfWrites;
}

export interface KeyWrites {
  readonly key: string;
  readonly writes: number;
  readonly share: number;
}

export interface SecondOfWrites {
  readonly second: string;
  readonly writes: number;
  readonly hottestKey: KeyWrites;
}

export interface LocalMemory {
  readonly mainHeapMb: number;
  readonly rssMb: number;
  readonly functions: Record<string, { heapUsedMb: number; heapTotalMb: number }>;
}

export const localStats = (target: Target) => admin<LocalStats>(target, 'stats');
export const resetLocalStats = (target: Target) => admin<unknown>(target, 'reset-stats');
export const localMemory = (target: Target) => admin<LocalMemory>(target, 'memory');
