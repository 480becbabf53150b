import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Item, keyed, n, openTarget, refusal, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/**
 * Conditional writes and what they return: PutItem, UpdateItem and
 * DeleteItem with ConditionExpression, ReturnValues and
 * ReturnValuesOnConditionCheckFailure, in the forms the platform sends them
 * (functions/shared/event-store.ts, functions/shared/views.ts).
 */
let target: Target;
let views: string; // id (S): the views tables
let events: string; // aggregateId (S) + version (N): the event store

beforeAll(async () => {
  target = await openTarget();
  views = await target.table({
    ...keyed(['id', 'S']),
  });
  events = await target.table({
    ...keyed(['aggregateId', 'S'], ['version', 'N']),
  });
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const get = async (TableName: string, Key: Item) =>
  (await target.db.send(new GetItemCommand({ TableName, Key, ConsistentRead: true }))).Item;

// API Reference, PutItem: "ConditionExpression: A condition that must be satisfied in order for a
// conditional PutItem operation to succeed." Developer Guide, "Condition expressions": attribute_not_exists
// to prevent overwrites of an existing item.
describe('PutItem with attribute_not_exists(#id) (the event store first put)', () => {
  const put = (version: number, data: string, extra: Record<string, unknown> = {}) =>
    target.db.send(
      new PutItemCommand({
        TableName: events,
        Item: { aggregateId: s('order-1'), version: n(version), data: s(data) },
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': 'aggregateId' },
        ...extra,
      }),
    );

  test('writes a new item, refuses the second put of the same key and keeps the first', async () => {
    await put(1, 'first');
    const error = await refusal(put(1, 'second'));
    expect(error.name).toBe('ConditionalCheckFailedException');
    expect(error.message).toBe('The conditional request failed');
    expect(error.Item).toBeUndefined();
    expect(await get(events, { aggregateId: s('order-1'), version: n(1) })).toEqual({
      aggregateId: s('order-1'),
      version: n(1),
      data: s('first'),
    });
    // Another sort key of the same partition is another item: the condition holds.
    await put(2, 'other');
  });

  // API Reference, PutItem: "ReturnValuesOnConditionCheckFailure ... ALL_OLD ... the item attributes
  // are returned" with the ConditionalCheckFailedException.
  test('ReturnValuesOnConditionCheckFailure ALL_OLD returns the item that failed the condition', async () => {
    await put(10, 'kept');
    const error = await refusal(put(10, 'again', { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    expect(error.name).toBe('ConditionalCheckFailedException');
    expect(error.Item).toEqual({ aggregateId: s('order-1'), version: n(10), data: s('kept') });
  });

  // API Reference, PutItem: "ReturnValues ... ALL_OLD - If PutItem overwrote an attribute name-value
  // pair, then the content of the old item is returned." NONE (the default) returns nothing.
  test('ReturnValues NONE and ALL_OLD', async () => {
    const Item = { aggregateId: s('rv'), version: n(1), data: s('a') };
    const first = await target.db.send(
      new PutItemCommand({ TableName: events, Item, ReturnValues: 'ALL_OLD' }),
    );
    expect(first.Attributes).toBeUndefined();
    const second = await target.db.send(
      new PutItemCommand({ TableName: events, Item: { ...Item, data: s('b') }, ReturnValues: 'ALL_OLD' }),
    );
    expect(second.Attributes).toEqual(Item);
    const third = await target.db.send(new PutItemCommand({ TableName: events, Item }));
    expect(third.Attributes).toBeUndefined();
  });

  // API Reference, PutItem: "ReturnValues ... The ReturnValues parameter is used by several DynamoDB
  // operations; however, PutItem does not recognize any values other than NONE or ALL_OLD."
  test('ReturnValues ALL_NEW is refused by PutItem', async () => {
    const error = await refusal(
      target.db.send(
        new PutItemCommand({
          TableName: events,
          Item: { aggregateId: s('rv2'), version: n(1) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
  });
});

// API Reference, UpdateItem: "Edits an existing item's attributes, or adds a new item to the table if it
// does not already exist ... You can also perform a conditional update on an existing item." The
// projectors' upsertView: 'attribute_not_exists(#v) OR #v < :v' with 'SET ... REMOVE ...'.
describe('UpdateItem with the version guard of functions/shared/views.ts', () => {
  const upsert = (id: string, version: number, set: Record<string, string>, remove: string[] = []) => {
    const names: Record<string, string> = { '#v': 'version' };
    const values: Item = { ':v': n(version) };
    const sets = ['#v = :v'];
    Object.entries(set).forEach(([name, value], i) => {
      names[`#a${i}`] = name;
      values[`:a${i}`] = s(value);
      sets.push(`#a${i} = :a${i}`);
    });
    const removes = remove.map((name, i) => {
      names[`#r${i}`] = name;
      return `#r${i}`;
    });
    return target.db.send(
      new UpdateItemCommand({
        TableName: views,
        Key: { id: s(id) },
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: 'attribute_not_exists(#v) OR #v < :v',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
  };

  test('creates the item, applies a newer version, refuses an equal or older one', async () => {
    const created = await upsert('v-1', 1, { status: 'PLACED', note: 'x' });
    expect(created.Attributes).toEqual({ id: s('v-1'), version: n(1), status: s('PLACED'), note: s('x') });
    const newer = await upsert('v-1', 3, { status: 'PAID' }, ['note']);
    expect(newer.Attributes).toEqual({ id: s('v-1'), version: n(3), status: s('PAID') });
    for (const version of [3, 2]) {
      const error = await refusal(upsert('v-1', version, { status: 'OLD' }));
      expect(error.name).toBe('ConditionalCheckFailedException');
    }
    expect(await get(views, { id: s('v-1') })).toEqual({ id: s('v-1'), version: n(3), status: s('PAID') });
  });

  // API Reference, UpdateItem: "ReturnValuesOnConditionCheckFailure ... ALL_OLD".
  test('ReturnValuesOnConditionCheckFailure ALL_OLD on UpdateItem', async () => {
    await upsert('v-2', 5, { status: 'SHIPPED' });
    const error = await refusal(
      target.db.send(
        new UpdateItemCommand({
          TableName: views,
          Key: { id: s('v-2') },
          UpdateExpression: 'SET #v = :v',
          ConditionExpression: '#v < :v',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': n(4) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(error.name).toBe('ConditionalCheckFailedException');
    expect(error.Item).toEqual({ id: s('v-2'), version: n(5), status: s('SHIPPED') });
  });

  // API Reference, UpdateItem: "ReturnValues: NONE | ALL_OLD | UPDATED_OLD | ALL_NEW | UPDATED_NEW ...
  // UPDATED_OLD - Returns only the updated attributes, as they appeared before the UpdateItem operation."
  test('ReturnValues variants', async () => {
    const Key = { id: s('rv') };
    const update = (
      ReturnValues: 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW',
      value: string,
    ) =>
      target.db.send(
        new UpdateItemCommand({
          TableName: views,
          Key,
          UpdateExpression: 'SET a = :a',
          ExpressionAttributeValues: { ':a': s(value) },
          ReturnValues,
        }),
      );
    await target.db.send(new PutItemCommand({ TableName: views, Item: { ...Key, a: s('0'), b: s('kept') } }));
    expect((await update('NONE', '1')).Attributes).toBeUndefined();
    expect((await update('ALL_OLD', '2')).Attributes).toEqual({ ...Key, a: s('1'), b: s('kept') });
    expect((await update('UPDATED_OLD', '3')).Attributes).toEqual({ a: s('2') });
    expect((await update('ALL_NEW', '4')).Attributes).toEqual({ ...Key, a: s('4'), b: s('kept') });
    expect((await update('UPDATED_NEW', '5')).Attributes).toEqual({ a: s('5') });
  });

  // API Reference, UpdateItem, ReturnValues: "UPDATED_OLD - Returns only the updated attributes, as they
  // appeared before the UpdateItem operation. UPDATED_NEW - Returns only the updated attributes, as they appear
  // after the UpdateItem operation." For a nested path, the updated attribute is that path, not its whole map.
  test('UPDATED_OLD and UPDATED_NEW of a nested path return only that path', async () => {
    const Key = { id: s('rv-nested') };
    await target.db.send(
      new PutItemCommand({
        TableName: views,
        Item: { ...Key, address: { M: { city: s('Oslo'), zip: s('0150') } }, other: s('kept') },
      }),
    );
    const update = (ReturnValues: 'UPDATED_OLD' | 'UPDATED_NEW', zip: string) =>
      target.db.send(
        new UpdateItemCommand({
          TableName: views,
          Key,
          UpdateExpression: 'SET address.zip = :z',
          ExpressionAttributeValues: { ':z': s(zip) },
          ReturnValues,
        }),
      );
    expect((await update('UPDATED_OLD', '0151')).Attributes).toEqual({ address: { M: { zip: s('0150') } } });
    expect((await update('UPDATED_NEW', '0152')).Attributes).toEqual({ address: { M: { zip: s('0152') } } });
  });

  // API Reference, UpdateItem: ALL_OLD "Returns all of the attributes of the item, as they appeared
  // before the UpdateItem operation": an item that did not exist returns none.
  test('ALL_OLD of an update that creates the item returns no Attributes', async () => {
    const out = await target.db.send(
      new UpdateItemCommand({
        TableName: views,
        Key: { id: s('rv-new') },
        UpdateExpression: 'SET a = :a',
        ExpressionAttributeValues: { ':a': s('x') },
        ReturnValues: 'ALL_OLD',
      }),
    );
    expect(out.Attributes).toBeUndefined();
  });
});

// API Reference, DeleteItem: "Deletes a single item in a table by primary key. You can perform a
// conditional delete operation that deletes the item if it exists, or if it has an expected attribute
// value." "Unless you specify conditions, the DeleteItem is an idempotent operation; running it multiple
// times on the same item or attribute does not result in an error response."
describe('DeleteItem', () => {
  test('conditional delete, ALL_OLD, ALL_OLD on failure, idempotent delete of an absent item', async () => {
    const Key = { id: s('del') };
    await target.db.send(new PutItemCommand({ TableName: views, Item: { ...Key, state: s('OPEN') } }));
    const refused = await refusal(
      target.db.send(
        new DeleteItemCommand({
          TableName: views,
          Key,
          ConditionExpression: '#s = :closed',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':closed': s('CLOSED') },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(refused.name).toBe('ConditionalCheckFailedException');
    expect(refused.Item).toEqual({ ...Key, state: s('OPEN') });
    const deleted = await target.db.send(
      new DeleteItemCommand({
        TableName: views,
        Key,
        ConditionExpression: 'attribute_exists(id)',
        ReturnValues: 'ALL_OLD',
      }),
    );
    expect(deleted.Attributes).toEqual({ ...Key, state: s('OPEN') });
    expect(await get(views, Key)).toBeUndefined();
    const again = await target.db.send(
      new DeleteItemCommand({ TableName: views, Key, ReturnValues: 'ALL_OLD' }),
    );
    expect(again.Attributes).toBeUndefined();
    const conditioned = await refusal(
      target.db.send(
        new DeleteItemCommand({ TableName: views, Key, ConditionExpression: 'attribute_exists(id)' }),
      ),
    );
    expect(conditioned.name).toBe('ConditionalCheckFailedException');
  });
});
