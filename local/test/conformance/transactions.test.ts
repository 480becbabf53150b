import {
  GetItemCommand,
  PutItemCommand,
  TransactGetItemsCommand,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { type Item, keyed, n, openTarget, refusal, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/**
 * TransactWriteItems and TransactGetItems as the event store uses them:
 * several conditional first puts and condition checks committed together.
 */
let target: Target;
let events: string; // aggregateId (S) + version (N)
let other: string; // id (S)

beforeAll(async () => {
  target = await openTarget();
  [events, other] = await Promise.all([
    target.table({
      ...keyed(['aggregateId', 'S'], ['version', 'N']),
    }),
    target.table({
      ...keyed(['id', 'S']),
    }),
  ]);
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const firstPut = (aggregateId: string, version: number, extra: Item = {}): TransactWriteItem => ({
  Put: {
    TableName: events,
    Item: { aggregateId: s(aggregateId), version: n(version), ...extra },
    ConditionExpression: 'attribute_not_exists(#id)',
    ExpressionAttributeNames: { '#id': 'aggregateId' },
  },
});
const unchanged = (aggregateId: string, version: number): TransactWriteItem => ({
  ConditionCheck: {
    TableName: events,
    Key: { aggregateId: s(aggregateId), version: n(version + 1) },
    ConditionExpression: 'attribute_not_exists(#id)',
    ExpressionAttributeNames: { '#id': 'aggregateId' },
  },
});
const transact = (TransactItems: TransactWriteItem[], extra: { ClientRequestToken?: string } = {}) =>
  target.db.send(new TransactWriteItemsCommand({ TransactItems, ...extra }));
const event = async (aggregateId: string, version: number) =>
  (
    await target.db.send(
      new GetItemCommand({
        TableName: events,
        Key: { aggregateId: s(aggregateId), version: n(version) },
        ConsistentRead: true,
      }),
    )
  ).Item;

// API Reference, TransactWriteItems: "The actions are completed atomically so that either all of them
// succeed, or all of them fail."
describe('TransactWriteItems', () => {
  test('commits every action: puts in two tables, an update, a delete, a condition check', async () => {
    await target.db.send(new PutItemCommand({ TableName: other, Item: { id: s('doomed') } }));
    await target.db.send(new PutItemCommand({ TableName: other, Item: { id: s('counter'), n: n(1) } }));
    await transact([
      firstPut('t-1', 1),
      firstPut('t-1', 2),
      unchanged('t-9', 0),
      { Delete: { TableName: other, Key: { id: s('doomed') } } },
      {
        Update: {
          TableName: other,
          Key: { id: s('counter') },
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': n(1) },
        },
      },
    ]);
    expect(await event('t-1', 1)).toBeDefined();
    expect(await event('t-1', 2)).toBeDefined();
    const counter = await target.db.send(
      new GetItemCommand({ TableName: other, Key: { id: s('counter') }, ConsistentRead: true }),
    );
    expect(counter.Item?.n).toEqual(n(2));
    const doomed = await target.db.send(
      new GetItemCommand({ TableName: other, Key: { id: s('doomed') }, ConsistentRead: true }),
    );
    expect(doomed.Item).toBeUndefined();
  });

  // API Reference, TransactWriteItems, Errors, TransactionCanceledException: "The entire transaction request
  // was canceled" ... "Cancellation reason codes and possible error messages: No Errors: Code: None, Message:
  // null; Conditional Check Failed: Code: ConditionalCheckFailed, Message: The conditional request failed."
  // "If ... ReturnValuesOnConditionCheckFailure ... ALL_OLD ... the item ... is returned" in the reason.
  test('one failed condition cancels all, with a reason per action in request order', async () => {
    await transact([firstPut('t-2', 1, { note: s('there') }), firstPut('t-2b', 1)]);
    const error = await refusal(
      transact([
        firstPut('t-2', 2),
        {
          // the same put, asking for the item on failure
          Put: { ...firstPut('t-2', 1).Put!, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
        },
        firstPut('t-2', 3),
        unchanged('t-2b', 0),
      ]),
    );
    expect(error.name).toBe('TransactionCanceledException');
    expect(error.message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, None, ConditionalCheckFailed]',
    );
    const reasons = error.CancellationReasons as { Code?: string; Message?: string; Item?: Item }[];
    expect(reasons.map((r) => r.Code)).toEqual([
      'None',
      'ConditionalCheckFailed',
      'None',
      'ConditionalCheckFailed',
    ]);
    expect(reasons[1]?.Item).toEqual({ aggregateId: s('t-2'), version: n(1), note: s('there') });
    expect(reasons[1]?.Message).toBe('The conditional request failed');
    // Without ReturnValuesOnConditionCheckFailure the reason carries no item.
    expect(reasons[3]?.Item).toBeUndefined();
    expect(await event('t-2', 2)).toBeUndefined();
    expect(await event('t-2', 3)).toBeUndefined();
  });

  // API Reference, TransactWriteItems: "no two actions can target the same item. For example, you cannot
  // both ConditionCheck and Update the same item."
  test('two actions on one item is a ValidationException', async () => {
    const error = await refusal(transact([firstPut('t-3', 1), unchanged('t-3', 0)]));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Transaction request cannot include multiple operations on one item');
    expect(await event('t-3', 1)).toBeUndefined();
  });

  // The same item whatever order its Key's attributes are written in: a put names it by its item, the
  // delete by a Key with the sort key first.
  test('two actions on one item are refused with the Key written sort key first', async () => {
    const error = await refusal(
      transact([
        firstPut('t-4', 1),
        { Delete: { TableName: events, Key: { version: n(1), aggregateId: s('t-4') } } },
      ]),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Transaction request cannot include multiple operations on one item');
    expect(await event('t-4', 1)).toBeUndefined();
  });

  // API Reference, TransactWriteItems, TransactItems: "Array Members: Minimum number of 1 item. Maximum
  // number of 100 items."
  test('100 actions commit; 101 are a ValidationException', async () => {
    await transact(Array.from({ length: 100 }, (_, i) => firstPut('t-100', i)));
    expect(await event('t-100', 99)).toBeDefined();
    const error = await refusal(transact(Array.from({ length: 101 }, (_, i) => firstPut('t-101', i))));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toContain('Member must have length less than or equal to 100');
    expect(await event('t-101', 0)).toBeUndefined();
  });

  // API Reference, TransactWriteItems: "The aggregate size of the items in the transaction cannot exceed 4 MB."
  const body = s('x'.repeat(380 * 1024));
  test('more than 4 MB of items is a ValidationException', async () => {
    const items = Array.from({ length: 12 }, (_, i) => firstPut('t-4mb', i, { body }));
    const error = await refusal(transact(items));
    expect(error.name).toBe('ValidationException');
    expect(await event('t-4mb', 0)).toBeUndefined();
  });

  test('items of 3.8 MB in all (ten of 380 KB) are within the 4 MB limit', async () => {
    await transact(Array.from({ length: 10 }, (_, i) => firstPut('t-3mb', i, { body })));
    expect(await event('t-3mb', 9)).toBeDefined();
  });

  // API Reference, TransactWriteItems, ClientRequestToken: "Providing a ClientRequestToken makes the call to
  // TransactWriteItems idempotent, meaning that multiple identical calls have the same effect as one single
  // call." "If you submit a request with the same client token but a change in other parameters within the
  // 10-minute idempotency window, DynamoDB returns an IdempotentParameterMismatch exception."
  test('ClientRequestToken: the same request again has no second effect; a different one is refused', async () => {
    await target.db.send(new PutItemCommand({ TableName: other, Item: { id: s('idem'), n: n(0) } }));
    const add = (amount: number): TransactWriteItem[] => [
      {
        Update: {
          TableName: other,
          Key: { id: s('idem') },
          UpdateExpression: 'ADD n :a',
          ExpressionAttributeValues: { ':a': n(amount) },
        },
      },
    ];
    const token = `conformance-${Date.now()}`;
    await transact(add(1), { ClientRequestToken: token });
    await transact(add(1), { ClientRequestToken: token });
    const after = await target.db.send(
      new GetItemCommand({ TableName: other, Key: { id: s('idem') }, ConsistentRead: true }),
    );
    expect(after.Item?.n).toEqual(n(1));
    const error = await refusal(transact(add(2), { ClientRequestToken: token }));
    expect(error.name).toBe('IdempotentParameterMismatchException');
  });

  test('a validation error in one action refuses the whole request', async () => {
    const error = await refusal(
      transact([
        firstPut('t-5', 1),
        { Put: { TableName: events, Item: { aggregateId: s('t-5'), version: s('not a number') } } },
      ]),
    );
    expect(error.name).toBe('ValidationException');
    expect(await event('t-5', 1)).toBeUndefined();
  });
});

// API Reference, TransactGetItems: "a synchronous operation that atomically retrieves multiple items from
// one or more tables ... The items are returned in the same order as the requested items"; an item not
// found is an empty ItemResponse.
describe('TransactGetItems', () => {
  test('returns the items in request order, an empty response for a missing one, projections applied', async () => {
    await transact([firstPut('g-1', 1, { a: s('1'), b: s('2') }), firstPut('g-1', 2, { a: s('3') })]);
    const out = await target.db.send(
      new TransactGetItemsCommand({
        TransactItems: [
          { Get: { TableName: events, Key: { aggregateId: s('g-1'), version: n(2) } } },
          { Get: { TableName: events, Key: { aggregateId: s('g-1'), version: n(9) } } },
          {
            Get: {
              TableName: events,
              Key: { aggregateId: s('g-1'), version: n(1) },
              ProjectionExpression: 'b',
            },
          },
        ],
      }),
    );
    expect(out.Responses).toEqual([
      { Item: { aggregateId: s('g-1'), version: n(2), a: s('3') } },
      {},
      { Item: { b: s('2') } },
    ]);
  });

  test('two gets of one item is a ValidationException', async () => {
    const Key = { aggregateId: s('g-1'), version: n(1) };
    const error = await refusal(
      target.db.send(
        new TransactGetItemsCommand({
          TransactItems: [{ Get: { TableName: events, Key } }, { Get: { TableName: events, Key } }],
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
  });
});
