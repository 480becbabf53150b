import { StandardRetryStrategy } from '@smithy/core/retry';

/** When the running invocation times out (epoch ms), as its handler set it: a sandbox runs one at a time. */
let invocationDeadline = Number.POSITIVE_INFINITY;

/** Kept free after a retry's backoff: for the retried call, and for the handler to answer with what failed. */
export const RETRY_MARGIN_MS = 2_000;

/**
 * Bounds the SDK's retries by the invocation's timeout (see DeadlineRetries).
 * Every handler calls it first with its Lambda context; without one (a
 * handler called directly) retries are unbounded by time.
 */
export function retryWithin(context: { getRemainingTimeInMillis(): number } | undefined) {
  invocationDeadline = context ? Date.now() + context.getRemainingTimeInMillis() : Number.POSITIVE_INFINITY;
}

const NO_RETRY_IN_TIME = new Error('no retry: its backoff would run into the invocation timeout');

/**
 * The SDK's standard retries (backoff with jitter, throttling's longer base,
 * the retry quota), but no backoff that ends within RETRY_MARGIN_MS of the
 * invocation's timeout: the caller then gets the refused call's own error
 * (a throttle becomes the API's 429, a saga step's transient error), not a
 * timeout that says nothing (API Gateway's 500). Seen: five attempts at a
 * table throttling every call backed off past a loaded sandbox's 10 s.
 */
export class DeadlineRetries extends StandardRetryStrategy {
  override async refreshRetryTokenForRetry(
    ...[token, errorInfo]: Parameters<StandardRetryStrategy['refreshRetryTokenForRetry']>
  ) {
    const leftMs = invocationDeadline - RETRY_MARGIN_MS - Date.now();
    if (leftMs === Number.POSITIVE_INFINITY) return super.refreshRetryTokenForRetry(token, errorInfo);
    if (leftMs <= 0) throw NO_RETRY_IN_TIME;
    // The standard strategy sleeps its backoff before it returns the token: the sleep is raced, not read.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(NO_RETRY_IN_TIME), leftMs);
    });
    try {
      return await Promise.race([super.refreshRetryTokenForRetry(token, errorInfo), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
