import { eachAtMost } from '../../functions/shared/views';

describe('views: a batch written a few at a time', () => {
  test('works on every item once, never more than the limit at once, taking the next as one ends', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    const items = Array.from({ length: 23 }, (_, i) => i);
    await eachAtMost(items, 4, async (item) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Uneven durations, so that lanes finish out of step.
      await new Promise((resolve) => setTimeout(resolve, (item % 5) * 2));
      inFlight--;
      done.push(item);
    });
    expect(most).toBe(4);
    expect([...done].sort((a, b) => a - b)).toEqual(items);
  });

  test('fewer items than the limit start at once; none is nothing', async () => {
    let inFlight = 0;
    let most = 0;
    await eachAtMost([1, 2], 4, async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
    });
    expect(most).toBe(2);
    await expect(eachAtMost([], 4, async () => undefined)).resolves.toBeUndefined();
  });
});
