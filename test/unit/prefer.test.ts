import { pollGaps, pollUntil } from '../../functions/shared/poll';
import { MAX_WAIT_SECONDS, parsePrefer, preferredWaitSeconds } from '../../functions/shared/prefer';

describe('the Prefer header (RFC 7240)', () => {
  test('a wait the API honours is read in whole seconds, 1 to 10', () => {
    expect(preferredWaitSeconds('wait=1')).toBe(1);
    expect(preferredWaitSeconds('wait=5')).toBe(5);
    expect(preferredWaitSeconds(`wait=${MAX_WAIT_SECONDS}`)).toBe(10);
    expect(preferredWaitSeconds('wait=05')).toBe(5);
  });

  test('names are case-insensitive, space around "=" and the list is allowed, values may be quoted', () => {
    expect(preferredWaitSeconds('WAIT=3')).toBe(3);
    expect(preferredWaitSeconds('Wait = 4')).toBe(4);
    expect(preferredWaitSeconds('wait="7"')).toBe(7);
    expect(preferredWaitSeconds('  wait=2  ')).toBe(2);
  });

  test('wait among other preferences, in one header or in several joined by commas', () => {
    expect(preferredWaitSeconds('respond-async, wait=6')).toBe(6);
    expect(preferredWaitSeconds('return=representation,wait=2;foo=bar, handling=lenient')).toBe(2);
    expect(preferredWaitSeconds('foo="a,wait=9", wait=3')).toBe(3);
  });

  test('the first instance of a preference counts (RFC 7240 §2)', () => {
    expect(preferredWaitSeconds('wait=2, wait=9')).toBe(2);
    // The first is not one the API honours: the request is served as without a wait.
    expect(preferredWaitSeconds('wait=0, wait=5')).toBeUndefined();
  });

  test.each([
    [undefined],
    [''],
    ['respond-async'],
    ['wait'],
    ['wait='],
    ['wait=0'],
    ['wait=11'],
    ['wait=600'],
    ['wait=-1'],
    ['wait=+3'],
    ['wait=2.5'],
    ['wait=1e1'],
    ['wait=abc'],
    ['wait=" 5"'],
    ['wait=99999999999999999999'],
    ['wait=5 6'],
    ['waiting=5'],
    ['"wait"=5'],
  ])('%p is not a wait the API honours (ignored, never an error)', (header) => {
    expect(preferredWaitSeconds(header)).toBeUndefined();
  });

  test('parsePrefer keeps every well-formed preference and skips the malformed ones', () => {
    expect([
      ...parsePrefer('respond-async, wait=5;x=1, bad value, return="minimal", ,handling=strict'),
    ]).toEqual([
      ['respond-async', ''],
      ['wait', '5'],
      ['return', 'minimal'],
      ['handling', 'strict'],
    ]);
  });
});

describe('polling until a condition holds', () => {
  const schedule = { firstMs: 200, factor: 1.5, maxMs: 1_000 };

  test('the gaps grow by the factor up to the maximum, and the last one ends at the bound', () => {
    expect(pollGaps(schedule, 2_000)).toEqual([200, 300, 450, 675, 375]);
    expect(pollGaps(schedule, 5_000)).toEqual([200, 300, 450, 675, 1000, 1000, 1000, 375]);
    expect(pollGaps(schedule, 100)).toEqual([100]);
  });

  test('reads after each gap until done, and not before the first gap', async () => {
    const pauses: number[] = [];
    let reads = 0;
    const outcome = await pollUntil(
      async () => ++reads,
      (n) => n === 3,
      Date.now() + 60_000,
      schedule,
      async (ms) => {
        pauses.push(ms);
      },
    );
    expect(outcome).toEqual({ value: 3, reads: 3 });
    expect(pauses).toEqual([200, 300, 450]);
  });

  test('gives up at the deadline, its last read at the deadline', async () => {
    // On a clock of its own, each pause moving it on exactly: real timers fire late on a busy host (a CI
    // run once read twice, its second timer past the deadline), and the schedule is what is under test.
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const start = Date.now();
      const readAt: number[] = [];
      const outcome = await pollUntil(
        async () => readAt.push(Date.now() - start),
        () => false,
        start + 400,
        { firstMs: 100, factor: 2, maxMs: 1_000 },
        async (ms) => {
          jest.setSystemTime(Date.now() + ms);
        },
      );
      expect(outcome.value).toBeUndefined();
      // Reads after 100 ms, then 300 ms (200 more), then at 400 ms (the deadline cuts the 400 ms gap).
      expect(readAt).toEqual([100, 300, 400]);
      expect(outcome.reads).toBe(3);
    } finally {
      jest.useRealTimers();
    }
  });

  test('a deadline already past reads nothing', async () => {
    const outcome = await pollUntil(
      async () => 1,
      () => true,
      Date.now() - 1,
      schedule,
    );
    expect(outcome).toEqual({ value: undefined, reads: 0 });
  });
});
