import { DeadlineRetries, RETRY_MARGIN_MS, retryWithin } from '../../functions/shared/retries';

// A fixed backoff, so that whether a retry fits before the deadline does not depend on jitter.
const BACKOFF_MS = 300;
const retries = () =>
  new DeadlineRetries({
    maxAttempts: 5,
    backoff: { computeNextBackoffDelay: () => BACKOFF_MS, setDelayBase: () => undefined },
  });
const throttled = {
  errorType: 'THROTTLING' as const,
  error: Object.assign(new Error('throttled'), { name: 'ThrottlingException', cause: undefined }),
};
const remaining = (ms: number) => ({ getRemainingTimeInMillis: () => ms });

/** Asks `strategy` for a retry after a throttled first attempt: the retry count, or the refusal. */
async function retryAfterThrottle(strategy: DeadlineRetries) {
  const first = await strategy.acquireInitialRetryToken('dynamodb');
  const started = performance.now();
  const outcome = await strategy.refreshRetryTokenForRetry(first, throttled).then(
    (token) => ({ retries: token.getRetryCount() }),
    (error: Error) => ({ refused: error.message }),
  );
  return { ...outcome, tookMs: performance.now() - started };
}

describe('SDK retries bounded by the invocation timeout', () => {
  afterEach(() => retryWithin(undefined));

  test('with time to spare, a refused call is retried after its backoff', async () => {
    retryWithin(remaining(RETRY_MARGIN_MS + 5_000));
    const outcome = await retryAfterThrottle(retries());
    expect(outcome).toMatchObject({ retries: 1 });
    expect(outcome.tookMs).toBeGreaterThanOrEqual(BACKOFF_MS - 1);
  });

  test('a backoff that would end inside the margin is cut short, and no retry is made', async () => {
    retryWithin(remaining(RETRY_MARGIN_MS + 100));
    const outcome = await retryAfterThrottle(retries());
    expect(outcome).toMatchObject({ refused: expect.stringMatching(/invocation timeout/) });
    // Refused when the time left reached the margin, not after the whole backoff.
    expect(outcome.tookMs).toBeLessThan(BACKOFF_MS);
  });

  test('with the margin already reached, no retry is waited for at all', async () => {
    retryWithin(remaining(RETRY_MARGIN_MS - 1));
    const outcome = await retryAfterThrottle(retries());
    expect(outcome).toMatchObject({ refused: expect.stringMatching(/invocation timeout/) });
    expect(outcome.tookMs).toBeLessThan(50);
  });

  test('without an invocation (a handler called directly), the standard retries apply', async () => {
    retryWithin(undefined);
    await expect(retryAfterThrottle(retries())).resolves.toMatchObject({ retries: 1 });
  });

  test('the standard bounds still hold: no retry past the attempts allowed', async () => {
    retryWithin(remaining(60_000));
    const strategy = new DeadlineRetries({ maxAttempts: 1 });
    await expect(retryAfterThrottle(strategy)).resolves.toMatchObject({
      refused: 'No retry token available',
    });
  });
});
