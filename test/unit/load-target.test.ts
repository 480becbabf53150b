import { retryAfterMs } from '../../load/target';

describe('load: a request refused for load', () => {
  const refused = (retryAfter?: string) =>
    new Response('{}', {
      status: 429,
      headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    });

  test('is sent again after the Retry-After it names, in seconds, at most 10', () => {
    expect(retryAfterMs(refused('2'))).toBe(2_000);
    expect(retryAfterMs(refused('60'))).toBe(10_000);
  });

  test('is sent again after 1 s when it names no pause', () => {
    expect(retryAfterMs(refused())).toBe(1_000);
    expect(retryAfterMs(refused('soon'))).toBe(1_000);
    expect(retryAfterMs(refused('0'))).toBe(1_000);
  });
});
