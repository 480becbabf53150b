import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventPattern, EventPatternError, matchesPattern, validatePattern } from '../../eventbridge/pattern';

interface PatternCase {
  readonly name: string;
  readonly pattern: EventPattern;
  readonly event: Record<string, unknown>;
  readonly expected: boolean;
}

// The expectations are event-ruler's own (see ../integration/event-pattern-conformance.test.ts).
const cases = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'event-patterns.json'), 'utf8'),
) as PatternCase[];

const envelope = {
  version: '0',
  id: '0d3b5a6e-1f2c-4b7a-9e8d-2c1f0a9b8c7d',
  'detail-type': 'OrderPlaced',
  source: 'commerce.orders',
  account: '123456789012',
  time: '2024-05-14T09:30:00Z',
  region: 'eu-west-1',
  resources: [],
  detail: { orderId: 'ord-1', status: 'PLACED', total: 42 },
};

describe('matchesPattern', () => {
  it('has a fixture of at least 60 cases with unique names', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(matchesPattern(c.pattern, c.event)).toBe(c.expected);
  });

  it('gives the same answer when a compiled pattern is reused', () => {
    const pattern = { detail: { status: ['PLACED'] } };
    expect(matchesPattern(pattern, envelope)).toBe(true);
    expect(matchesPattern(pattern, { ...envelope, detail: { status: 'SHIPPED' } })).toBe(false);
    expect(matchesPattern(pattern, envelope)).toBe(true);
  });

  it('does not modify the pattern or the event', () => {
    const pattern = { source: ['commerce.orders'], $or: [{ detail: { total: [42] } }, { region: ['x'] }] };
    const before = JSON.stringify({ pattern, envelope });
    matchesPattern(pattern, envelope);
    expect(JSON.stringify({ pattern, envelope })).toBe(before);
  });

  it('ignores undefined values in the event', () => {
    const event = { ...envelope, detail: { status: undefined } };
    expect(matchesPattern({ detail: { status: [{ exists: false }] } }, event)).toBe(true);
  });

  it('throws on a malformed pattern', () => {
    expect(() => matchesPattern({ source: 'commerce.orders' }, envelope)).toThrow(EventPatternError);
  });
});

describe('validatePattern', () => {
  it.each(cases.map((c) => [c.name, c.pattern] as const))('accepts the pattern of "%s"', (_name, pattern) => {
    expect(() => validatePattern(pattern)).not.toThrow();
  });

  const malformed: [string, unknown][] = [
    ['not an object', ['commerce.orders']],
    ['null', null],
    ['a string', 'commerce.orders'],
    ['an empty pattern', {}],
    ['an empty nested object', { detail: {} }],
    ['a bare string value', { source: 'commerce.orders' }],
    ['a bare number value', { detail: { total: 5 } }],
    ['a null value', { detail: { coupon: null } }],
    ['an empty value list', { source: [] }],
    ['a nested list', { source: [['commerce.orders']] }],
    ['an unknown operator', { source: [{ contains: 'orders' }] }],
    ['an empty match object', { source: [{}] }],
    ['two operators in one object', { source: [{ prefix: 'commerce.', suffix: '.orders' }] }],
    ['a non-string prefix', { source: [{ prefix: 5 }] }],
    ['prefix with an unknown option', { source: [{ prefix: { 'ignore-case': 'COMMERCE.' } }] }],
    ['a non-string suffix', { source: [{ suffix: null }] }],
    ['a non-string equals-ignore-case', { source: [{ 'equals-ignore-case': true }] }],
    ['a non-boolean exists', { detail: { coupon: [{ exists: 'true' }] } }],
    ['numeric that is not a list', { detail: { total: [{ numeric: 5 }] } }],
    ['an empty numeric list', { detail: { total: [{ numeric: [] }] } }],
    ['a numeric string bound', { detail: { total: [{ numeric: ['>', '5'] }] } }],
    ['an unknown numeric operator', { detail: { total: [{ numeric: ['!=', 5] }] } }],
    ['a numeric range starting with <', { detail: { total: [{ numeric: ['<', 5, '>', 1] }] } }],
    ['a numeric range with = and more', { detail: { total: [{ numeric: ['=', 5, '<', 6] }] } }],
    ['an empty numeric range', { detail: { total: [{ numeric: ['>', 5, '<', 1] }] } }],
    ['a numeric range with equal bounds', { detail: { total: [{ numeric: ['>=', 5, '<=', 5] }] } }],
    ['too many numeric terms', { detail: { total: [{ numeric: ['>', 1, '<', 5, '<', 6] }] } }],
    ['an infinite number', { detail: { total: [{ numeric: ['<', Number.POSITIVE_INFINITY] }] } }],
    ['anything-but true', { detail: { status: [{ 'anything-but': true }] } }],
    ['anything-but null', { detail: { status: [{ 'anything-but': null }] } }],
    ['anything-but an empty list', { detail: { status: [{ 'anything-but': [] }] } }],
    ['anything-but a mixed list', { detail: { status: [{ 'anything-but': ['PLACED', 1] }] } }],
    ['anything-but numeric', { detail: { total: [{ 'anything-but': { numeric: ['>', 1] } }] } }],
    ['anything-but an empty prefix', { detail: { status: [{ 'anything-but': { prefix: '' } }] } }],
    ['anything-but an empty prefix list', { detail: { status: [{ 'anything-but': { prefix: [] } }] } }],
    [
      'anything-but equals-ignore-case numbers',
      { detail: { status: [{ 'anything-but': { 'equals-ignore-case': [1] } }] } },
    ],
    ['consecutive wildcards', { resources: [{ wildcard: 'arn:**' }] }],
    ['a bad wildcard escape', { resources: [{ wildcard: 'arn:\\a*' }] }],
    ['a trailing wildcard backslash', { resources: [{ wildcard: 'arn:\\' }] }],
    ['cidr without a mask', { detail: { clientIp: [{ cidr: '10.0.0.0' }] } }],
    ['cidr with a /32 mask', { detail: { clientIp: [{ cidr: '10.0.0.1/32' }] } }],
    ['cidr with a /128 mask', { detail: { clientIp: [{ cidr: '2001:db8::1/128' }] } }],
    ['cidr with a negative mask', { detail: { clientIp: [{ cidr: '10.0.0.0/-1' }] } }],
    ['cidr with a host name', { detail: { clientIp: [{ cidr: 'example.com/8' }] } }],
    ['cidr with a short address', { detail: { clientIp: [{ cidr: '10.0.0/8' }] } }],
    ['$or with a reserved field name', { $or: [{ source: ['a'] }, { prefix: 'b' }] }],
    ['$or with a single object', { $or: [{ source: ['commerce.orders'] }] }],
    ['$or with an empty object', { $or: [{ source: ['commerce.orders'] }, {}] }],
    ['$or with a string', { $or: 'source' }],
    ['$or with a non-object element', { $or: [{ source: ['a'] }, { source: ['b'] }, 'c'] }],
    ['$or alternatives with a bad value', { $or: [{ source: ['a'] }, { source: 'b' }] }],
  ];

  it.each(malformed)('rejects %s', (_name, pattern) => {
    expect(() => validatePattern(pattern)).toThrow(EventPatternError);
  });

  it('names the offending path in the message', () => {
    expect(() => validatePattern({ detail: { shipping: { country: 'DE' } } })).toThrow(
      /"detail\.shipping\.country".*object or an array/,
    );
    expect(() => validatePattern({ detail: { total: [{ numeric: ['>', 5, '<', 1] }] } })).toThrow(
      /"detail\.total".*lower bound must be less than the upper bound/,
    );
  });

  it('accepts $or as an ordinary field name where event-ruler does', () => {
    expect(() => validatePattern({ detail: { $or: { status: ['PLACED'] } } })).not.toThrow();
    expect(() => validatePattern({ detail: { $or: [{ prefix: 'a' }, { suffix: 'b' }] } })).not.toThrow();
  });
});
