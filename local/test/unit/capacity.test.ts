import { itemWrites } from '../../capacity';
import { itemSize } from '../../dynamodb/values';

const partitionKeyOf = () => 'aggregateId';

describe('DynamoDB billing arithmetic of the local counters', () => {
  test('item size follows the documented rules', () => {
    expect(itemSize({ name: { S: 'abc' } })).toBe(4 + 3);
    expect(itemSize({ n: { N: '12345' } })).toBe(1 + 4);
    expect(itemSize({ ok: { BOOL: true }, z: { NULL: true } })).toBe(2 + 1 + 1 + 1);
    expect(itemSize({ m: { M: { a: { S: 'xy' } } } })).toBe(1 + 3 + 1 + 1 + 2);
    expect(itemSize({ l: { L: [{ S: 'x' }, { N: '1' }] } })).toBe(1 + 3 + (1 + 1) + (1 + 2));
  });

  test('a write costs a unit per KB rounded up, twice that inside a transaction', () => {
    const big = { aggregateId: { S: 'a' }, data: { S: 'x'.repeat(2500) } };
    expect(itemWrites('PutItem', { TableName: 'T', Item: big }, partitionKeyOf)).toEqual([
      { table: 'T', key: 'a', units: 3, transactional: false },
    ]);
    const writes = itemWrites(
      'TransactWriteItems',
      {
        TransactItems: [
          { Put: { TableName: 'T', Item: { aggregateId: { S: 'b' }, version: { N: '1' } } } },
          { ConditionCheck: { TableName: 'U', Key: { aggregateId: { S: 'c' }, version: { N: '2' } } } },
        ],
      },
      partitionKeyOf,
    );
    expect(writes).toEqual([
      { table: 'T', key: 'b', units: 2, transactional: true },
      { table: 'U', key: undefined, units: 2, transactional: true },
    ]);
  });
});
