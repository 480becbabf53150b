import {
  batchCondition,
  CONDITION_BOUNDS,
  type VersionedEntry,
  withinConditionBounds,
} from '../../functions/shared/views';

const entries = (count: number): VersionedEntry[] =>
  Array.from({ length: count }, (_, shard) => ({ attribute: `s${shard}`, version: 1, entry: '11:1:0:0:1' }));

/** What DynamoDB counts as operators in a batch condition: functions, comparisons, ANDs and ORs. */
const operatorsOf = (condition: string) =>
  (condition.match(/attribute_not_exists|<| AND | OR /g) ?? []).length;

describe('a view item’s entries per UpdateItem', () => {
  it('keeps all 64 shards of a product in one write', () => {
    expect(withinConditionBounds(entries(64)).map((run) => run.length)).toEqual([64]);
  });

  it('splits more than one condition holds, every entry once, in order, each run as long as the bounds allow', () => {
    const all = entries(150);
    const runs = withinConditionBounds(all);
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.flat()).toEqual(all);
    const within = (count: number) =>
      batchCondition(count).length <= CONDITION_BOUNDS.chars &&
      operatorsOf(batchCondition(count)) <= CONDITION_BOUNDS.operators;
    for (const run of runs) expect(within(run.length)).toBe(true);
    for (const run of runs.slice(0, -1)) expect(within(run.length + 1)).toBe(false);
  });

  it('counts 255 operators for 64 entries', () => {
    expect(operatorsOf(batchCondition(64))).toBe(255);
  });

  it('writes nothing for no entries', () => {
    expect(withinConditionBounds([])).toEqual([]);
  });
});
