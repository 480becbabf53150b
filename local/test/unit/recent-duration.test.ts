import { RecentDuration } from '../../lambda/recent-duration';

const after = (...samples: number[]) => {
  const recent = new RecentDuration();
  for (const ms of samples) recent.add(ms);
  return recent.ms;
};

test('unknown before three warm invocations, then their median', () => {
  expect(after()).toBeUndefined();
  expect(after(250, 2)).toBeUndefined();
  expect(after(250, 2, 1)).toBe(2);
  expect(after(3, 1, 2)).toBe(2);
});

test('one cold path after the seed moves the mean by at most 60%', () => {
  expect(after(2, 2, 2, 250)).toBeCloseTo(3.2);
  expect(after(2, 2, 2, 250, 2, 2, 2, 2)).toBeLessThan(2.5);
});

test('a lasting change is followed: smoothed within ten samples either way', () => {
  const up = after(2, 2, 2, ...Array(10).fill(50))!;
  expect(up).toBeGreaterThan(40);
  expect(up).toBeLessThanOrEqual(50);
  const down = after(50, 50, 50, ...Array(10).fill(2))!;
  expect(down).toBeLessThan(10);
  expect(down).toBeGreaterThan(2);
});

test('a mean near zero still rises (a sample then counts for up to 4 ms)', () => {
  expect(after(0, 0, 0, 100)).toBeCloseTo(0.8);
});
