import { type ArtilleryPeriod, artilleryScript, levelMetrics } from '../../load/artillery';
import { PROFILES, waitOption } from '../../load/profiles';

/** One Artillery period with the given place_order statuses (and nothing else). */
const period = (placeOrderCodes: Record<string, number>): ArtilleryPeriod => ({
  counters: Object.fromEntries(
    Object.entries(placeOrderCodes).map(([code, n]) => [
      `plugins.metrics-by-endpoint.place_order.codes.${code}`,
      n,
    ]),
  ),
  summaries: {},
  firstMetricAt: 0,
  lastMetricAt: 1_000,
  period: 0,
});

describe('load: the --wait option', () => {
  test('takes whole seconds from 1 to 10, as the contract does', () => {
    expect(waitOption('1')).toBe(1);
    expect(waitOption('10')).toBe(10);
    for (const bad of ['0', '11', '2.5', '-1', 'x', '', '1e1'])
      expect(() => waitOption(bad)).toThrow(/--wait/);
  });

  test('gives the requests N seconds more before they time out', () => {
    const plain = artilleryScript(PROFILES.smoke, 5, 'http://127.0.0.1:1');
    const waiting = artilleryScript({ ...PROFILES.smoke, waitSeconds: 5 }, 5, 'http://127.0.0.1:1');
    expect(plain.config.http.timeout).toBe(10);
    expect(waiting.config.http.timeout).toBe(15);
  });

  test('a 201 (final) order is expected with --wait, and an error without it', () => {
    const answers = period({ '201': 3, '202': 2 });
    const waited = levelMetrics(answers, 5, 1, 5);
    expect(waited.operations.place_order.unexpected).toBe(0);
    expect(waited.errors.total).toBe(0);
    const plain = levelMetrics(answers, 5, 1);
    expect(plain.operations.place_order.unexpected).toBe(3);
    expect(plain.errors.byKind).toEqual({ 'place_order 201': 3 });
  });
});
