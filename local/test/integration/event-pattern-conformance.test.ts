import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventPattern, EventPatternError, matchesPattern, validatePattern } from '../../eventbridge/pattern';
import { RulerResult, rulerResults, rulerVerdicts } from '../../eventbridge/ruler';

/**
 * The local cloud's event-pattern matcher against AWS's own, event-ruler (Java): on every
 * fixture case, event-ruler's verdict must be the fixture's `expected` and matchesPattern's.
 * Needs Maven (the first time, to fetch the jars) and Java 17+. The project's own stream filters
 * are checked against event-ruler the same way in its test/integration/stream-filter-conformance.test.ts.
 */

interface PatternCase {
  readonly name: string;
  readonly pattern: EventPattern;
  readonly event: Record<string, unknown>;
  readonly expected: boolean;
}

const FIXTURE = join(__dirname, '..', 'fixtures', 'event-patterns.json');
const cases = JSON.parse(readFileSync(FIXTURE, 'utf8')) as PatternCase[];

/** Patterns both matchers must reject; validatePattern's own messages are tested in the unit test. */
const MALFORMED: readonly unknown[] = [
  { source: 'commerce.orders' },
  { detail: {} },
  { source: [] },
  { source: [['commerce.orders']] },
  { source: [{ contains: 'orders' }] },
  { source: [{ prefix: 'commerce.', suffix: '.orders' }] },
  { detail: { coupon: [{ exists: 'true' }] } },
  { detail: { total: [{ numeric: ['>', '5'] }] } },
  { detail: { total: [{ numeric: ['<', 5, '>', 1] }] } },
  { detail: { total: [{ numeric: ['>=', 5, '<=', 5] }] } },
  { detail: { status: [{ 'anything-but': ['PLACED', 1] }] } },
  { detail: { status: [{ 'anything-but': { prefix: '' } }] } },
  { detail: { status: [{ 'anything-but': { prefix: [] } }] } },
  { resources: [{ wildcard: 'arn:**' }] },
  { resources: [{ wildcard: 'arn:\\a*' }] },
  { detail: { clientIp: [{ cidr: '10.0.0.1/32' }] } },
  { detail: { clientIp: [{ cidr: '2001:db8::1/128' }] } },
  { detail: { clientIp: [{ cidr: 'example.com/8' }] } },
  { $or: [{ source: ['a'] }, { prefix: 'b' }] },
  { $or: [{ source: ['commerce.orders'] }] },
  { $or: [{ source: ['a'] }, { source: 'b' }] },
];

describe('event patterns: matchesPattern agrees with AWS event-ruler', () => {
  let verdicts: boolean[] = [];

  beforeAll(() => {
    verdicts = rulerVerdicts(FIXTURE);
  }, 300_000);

  it('event-ruler answers every case', () => {
    expect(verdicts).toHaveLength(cases.length);
  });

  it.each(cases.map((c, index) => [c.name, c, index] as const))('%s', (_name, c, index) => {
    const actual = { ruler: verdicts[index], matchesPattern: matchesPattern(c.pattern, c.event) };
    expect(actual).toEqual({ ruler: c.expected, matchesPattern: c.expected });
  });

  it('both reject the same malformed patterns', () => {
    const dir = mkdtempSync(join(tmpdir(), 'event-ruler-'));
    try {
      const file = join(dir, 'malformed.json');
      writeFileSync(file, JSON.stringify(MALFORMED.map((pattern) => ({ pattern, event: { source: 'x' } }))));
      const results: RulerResult[] = rulerResults(file);
      const rejected = (result: RulerResult | undefined): boolean => typeof result === 'object';
      expect(MALFORMED.filter((_pattern, index) => !rejected(results[index]))).toEqual([]);
      for (const pattern of MALFORMED) expect(() => validatePattern(pattern)).toThrow(EventPatternError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
