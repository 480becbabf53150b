import { askForConsumedCapacity, consumedReadUnits, itemSize, itemWrites } from '../../capacity';

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

  test('read units come from the consumed capacity DynamoDB Local reports', () => {
    const query =
      '{"Items":[{"TableName":{"S":"decoy"}}],"ConsumedCapacity":{"TableName":"T","CapacityUnits":0.5}}';
    expect([...consumedReadUnits(query)]).toEqual([['T', 0.5]]);
    const batch =
      '{"Responses":{},"ConsumedCapacity":[{"TableName":"A","CapacityUnits":1.0},{"TableName":"B","CapacityUnits":2.5}]}';
    expect(Object.fromEntries(consumedReadUnits(batch))).toEqual({ A: 1, B: 2.5 });
    expect(consumedReadUnits('{"Items":[]}').size).toBe(0);
  });

  test('reads are asked for their consumed capacity, unless the caller chose', () => {
    const asked = JSON.parse(askForConsumedCapacity(Buffer.from('{"TableName":"T"}')).toString());
    expect(asked).toEqual({ ReturnConsumedCapacity: 'TOTAL', TableName: 'T' });
    expect(JSON.parse(askForConsumedCapacity(Buffer.from('{}')).toString())).toEqual({
      ReturnConsumedCapacity: 'TOTAL',
    });
    const chosen = Buffer.from('{"TableName":"T","ReturnConsumedCapacity":"NONE"}');
    expect(askForConsumedCapacity(chosen)).toBe(chosen);
  });
});
