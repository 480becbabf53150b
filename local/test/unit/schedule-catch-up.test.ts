import type { Assembly } from '../../assembly';
import type { KeptDocument } from '../../data-dir';
import { LocalEventBridge, type RuleSpec } from '../../eventbridge/bus';

/**
 * A scheduled rule started on kept data (`--data-dir`) first fires the
 * scheduled times it missed while the cloud was down, in order and each with
 * its own time, as EventBridge would have: the saga sweeper sweeps the window
 * of its event's time.
 */
const MINUTE = 60_000;
const rule: RuleSpec = {
  logicalId: 'SweepLostSagas',
  arn: 'arn:aws:events:us-east-1:000000000000:rule/SweepLostSagas',
  busName: 'default',
  scheduleMs: MINUTE,
  enabled: true,
  targets: [
    { id: 'Sweeper', arn: 'arn:aws:lambda:us-east-1:000000000000:function:Sweeper', maximumRetryAttempts: 0 },
  ],
};
const assembly = { dir: '', stackName: 'Test', template: { Resources: {} } } as unknown as Assembly;

class InMemoryDocument<T> implements KeptDocument<T> {
  constructor(public value?: T) {}
  read() {
    return this.value;
  }
  write(value: T) {
    this.value = structuredClone(value);
  }
}

/** Starts the rule on `kept` (its own timer an hour away, so only catch-up fires) and returns the times delivered. */
async function catchUp(kept: InMemoryDocument<Record<string, number>>): Promise<number[]> {
  const times: number[] = [];
  const bus = new LocalEventBridge(
    assembly,
    [rule],
    {
      lambda: async (_arn, input) => {
        times.push(Date.parse((input as { time: string }).time));
      },
    },
    () => undefined,
  );
  bus.startSchedules(60 * MINUTE, kept);
  await bus.drain();
  bus.stop();
  return times;
}

/** Event times are whole seconds (EventBridge's `time` has no milliseconds). */
const toSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

test('the scheduled times missed while stopped are fired in order, each with its own time, and kept', async () => {
  const last = Date.now() - 5.5 * MINUTE;
  const kept = new InMemoryDocument({ [rule.logicalId]: last });
  const times = await catchUp(kept);
  expect(times).toEqual([1, 2, 3, 4, 5].map((k) => toSecond(last + k * MINUTE)));
  expect(kept.value?.[rule.logicalId]).toBe(last + 5 * MINUTE);
});

test('a stop shorter than the rate fires nothing extra, and a first start (nothing kept) neither', async () => {
  expect(await catchUp(new InMemoryDocument({ [rule.logicalId]: Date.now() - 0.5 * MINUTE }))).toEqual([]);
  expect(await catchUp(new InMemoryDocument<Record<string, number>>())).toEqual([]);
});

test('a long stop is caught up for the last 24 hours only', async () => {
  const now = Date.now();
  const times = await catchUp(new InMemoryDocument({ [rule.logicalId]: now - 30 * 60 * MINUTE }));
  expect(times.length).toBeGreaterThanOrEqual(24 * 60 - 1);
  expect(times.length).toBeLessThanOrEqual(24 * 60);
  expect(times[0]!).toBeGreaterThanOrEqual(toSecond(now - 24 * 60 * MINUTE));
  expect(times.at(-1)!).toBeLessThan(now);
});
