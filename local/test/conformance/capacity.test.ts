import {
  type ConsumedCapacity,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  QueryCommand,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { itemWrites } from '../../capacity';
import { type Item, keyed, n, openTarget, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/**
 * ConsumedCapacity as DynamoDB reports it (ReturnConsumedCapacity TOTAL and
 * INDEXES): what the local cloud's metering and the cost model read.
 * Developer Guide, "DynamoDB read and write capacity modes" / "Read consumption" and "Write consumption":
 * "One read request unit represents one strongly consistent read operation per second, or two eventually
 * consistent read operations per second, for an item up to 4 KB in size." "One write request unit represents
 * one write for an item up to 1 KB in size." "Transactional read/write requests require twice the units."
 */
let target: Target;
let table: string; // id (S)
let events: string; // aggregateId (S) + version (N)
let indexed: string; // id (S), GSI "byG" on g (S), ALL

beforeAll(async () => {
  target = await openTarget();
  [table, events, indexed] = await Promise.all([
    target.table({
      ...keyed(['id', 'S']),
    }),
    target.table({
      ...keyed(['aggregateId', 'S'], ['version', 'N']),
    }),
    target.table({
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'S' },
        { AttributeName: 'g', AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byG',
          KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  ]);
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

/** An item of `bytes` bytes in `table` (id: 2 + id.length bytes; body: 4 + its length). */
const sized = (id: string, bytes: number): Item => ({
  id: s(id),
  body: s('x'.repeat(bytes - 2 - id.length - 4)),
});
const units = (consumed: ConsumedCapacity | ConsumedCapacity[] | undefined) =>
  (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
    (sum, c) => sum + (c.CapacityUnits ?? 0),
    0,
  );

// API Reference, GetItem: "ReturnConsumedCapacity ... TOTAL - The response includes only the aggregate
// ConsumedCapacity for the operation." Developer Guide, "Read consumption": GetItem "Item size is rounded up
// to the next 4 KB"; an item that does not exist consumes the minimum (0.5 or 1).
describe('GetItem', () => {
  test.each([
    [1000, true, 1],
    [1000, false, 0.5],
    [4096, true, 1],
    [4097, true, 2],
    [4097, false, 1],
    [9000, true, 3],
  ])('an item of %i bytes, ConsistentRead %s: %d units', async (bytes, ConsistentRead, expected) => {
    const id = `get-${bytes}`;
    await target.db.send(new PutItemCommand({ TableName: table, Item: sized(id, bytes) }));
    const out = await target.db.send(
      new GetItemCommand({
        TableName: table,
        Key: { id: s(id) },
        ConsistentRead,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    expect(out.ConsumedCapacity).toMatchObject({ TableName: table, CapacityUnits: expected });
  });

  test('an absent item: 1 strongly consistent, 0.5 eventually consistent', async () => {
    for (const [ConsistentRead, expected] of [
      [true, 1],
      [false, 0.5],
    ] as const) {
      const out = await target.db.send(
        new GetItemCommand({
          TableName: table,
          Key: { id: s('absent') },
          ConsistentRead,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      expect(out.ConsumedCapacity?.CapacityUnits).toBe(expected);
    }
  });

  test('ReturnConsumedCapacity NONE or absent: no ConsumedCapacity', async () => {
    const out = await target.db.send(new GetItemCommand({ TableName: table, Key: { id: s('absent') } }));
    expect(out.ConsumedCapacity).toBeUndefined();
  });
});

// Developer Guide, "Write consumption": "PutItem ... Item size is rounded up to the next 1 KB"; "If an item with
// the same primary key exists in the table, the operation replaces the item. For calculating provisioned
// throughput consumption, the item size that matters is the larger of the two."
describe('PutItem', () => {
  test.each([
    [100, 1],
    [1024, 1],
    [1025, 2],
    [3500, 4],
    [400 * 1024, 400],
  ])('an item of %i bytes: %d units', async (bytes, expected) => {
    const out = await target.db.send(
      new PutItemCommand({
        TableName: table,
        Item: sized(`put-${bytes}`, bytes),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    expect(out.ConsumedCapacity).toMatchObject({ TableName: table, CapacityUnits: expected });
  });

  test('replacing a larger item is billed by the larger of the two', async () => {
    await target.db.send(new PutItemCommand({ TableName: table, Item: sized('shrink', 5000) }));
    const out = await target.db.send(
      new PutItemCommand({ TableName: table, Item: sized('shrink', 100), ReturnConsumedCapacity: 'TOTAL' }),
    );
    expect(out.ConsumedCapacity?.CapacityUnits).toBe(5);
  });

  // API Reference, ConsumedCapacity: "GlobalSecondaryIndexes - The amount of throughput consumed on each global
  // index affected by the operation"; "Table - The amount of throughput consumed on the table". Developer
  // Guide, "Provisioned throughput considerations for Global Secondary Indexes": a put of an item the index
  // holds also writes the index.
  test('INDEXES: the table and each index affected', async () => {
    const out = await target.db.send(
      new PutItemCommand({
        TableName: indexed,
        Item: { id: s('i1'), g: s('x'), body: s('y'.repeat(1500)) },
        ReturnConsumedCapacity: 'INDEXES',
      }),
    );
    expect(out.ConsumedCapacity).toMatchObject({
      TableName: indexed,
      CapacityUnits: 4,
      Table: { CapacityUnits: 2 },
      GlobalSecondaryIndexes: { byG: { CapacityUnits: 2 } },
    });
    const sparse = await target.db.send(
      new PutItemCommand({ TableName: indexed, Item: { id: s('i2') }, ReturnConsumedCapacity: 'INDEXES' }),
    );
    expect(sparse.ConsumedCapacity).toMatchObject({
      TableName: indexed,
      CapacityUnits: 1,
      Table: { CapacityUnits: 1 },
    });
    expect(sparse.ConsumedCapacity?.GlobalSecondaryIndexes?.byG).toBeUndefined();
  });
});

// API Reference, TransactWriteItems: "ReturnConsumedCapacity"; Developer Guide, "Capacity management for
// transactions": "Transactional write requests require two write capacity units ... for items up to 1 KB."
describe('TransactWriteItems', () => {
  test('two units per KB of each item, one ConsumedCapacity entry per table', async () => {
    const out = await target.db.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: table, Item: sized('tx-1', 1000) } },
          { Put: { TableName: table, Item: sized('tx-2', 2000) } },
          { Put: { TableName: events, Item: { aggregateId: s('tx'), version: n(1) } } },
        ],
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    const byTable = Object.fromEntries(
      (out.ConsumedCapacity ?? []).map((c) => [c.TableName, c.CapacityUnits]),
    );
    expect(byTable).toEqual({ [table]: 6, [events]: 2 });
  });
});

// Developer Guide, "Read consumption": "Query—Reads multiple items that have the same partition key value. All
// items returned are treated as a single read operation, whereby DynamoDB computes the total size of all items
// and then rounds up to the next 4 KB boundary."
describe('Query', () => {
  test('the sum of the items read, rounded up to 4 KB; half for eventually consistent', async () => {
    for (let v = 1; v <= 3; v++) {
      await target.db.send(
        new PutItemCommand({
          TableName: events,
          // aggregateId: 11 + 1; version: 7 + 2 (a one-digit number); body: 4 + 1500: 1,525 bytes each.
          Item: { aggregateId: s('q'), version: n(v), body: s('z'.repeat(1500)) },
        }),
      );
    }
    const read = (ConsistentRead: boolean) =>
      target.db.send(
        new QueryCommand({
          TableName: events,
          KeyConditionExpression: 'aggregateId = :p',
          ExpressionAttributeValues: { ':p': s('q') },
          ConsistentRead,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
    // 3 × ~1.5 KB ≈ 4.5 KB: two 4 KB units (each item alone would be one unit, three in all).
    expect((await read(true)).ConsumedCapacity).toMatchObject({ TableName: events, CapacityUnits: 2 });
    expect((await read(false)).ConsumedCapacity?.CapacityUnits).toBe(1);
  });

  test('a query that returns nothing consumes the minimum', async () => {
    const out = await target.db.send(
      new QueryCommand({
        TableName: events,
        KeyConditionExpression: 'aggregateId = :p',
        ExpressionAttributeValues: { ':p': s('nothing') },
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    expect(out.ConsumedCapacity?.CapacityUnits).toBe(1);
  });
});

// The local cloud's counters (local/capacity.ts itemWrites, behind /_local/stats) must count the write units
// DynamoDB reports for the same request: for the platform's writes, first puts of new items, alone and in
// transactions, on a table without a global secondary index.
describe("the local cloud's write counters", () => {
  const partitionKeyOf = (name: string) =>
    name === table ? 'id' : name === events ? 'aggregateId' : undefined;
  const counted = (operation: string, input: object) =>
    itemWrites(operation, input as Record<string, unknown>, partitionKeyOf).reduce(
      (sum, w) => sum + w.units,
      0,
    );

  test.each([100, 1024, 1025, 2048, 2049, 10_000, 400 * 1024])('PutItem of %i bytes', async (bytes) => {
    const input: PutItemCommandInput = { TableName: table, Item: sized(`counted-${bytes}`, bytes) };
    const out = await target.db.send(new PutItemCommand({ ...input, ReturnConsumedCapacity: 'TOTAL' }));
    expect(counted('PutItem', input)).toBe(units(out.ConsumedCapacity));
  });

  test('TransactWriteItems of first puts in two tables', async () => {
    const TransactItems: TransactWriteItem[] = [
      ...[100, 1024, 1025, 5000, 40_000].map((bytes, i) => ({
        Put: {
          TableName: table,
          Item: sized(`counted-tx-${i}`, bytes),
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': 'id' },
        },
      })),
      ...[1, 2, 3].map((version) => ({
        Put: {
          TableName: events,
          Item: { aggregateId: s('counted'), version: n(version), data: s('d'.repeat(version * 700)) },
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': 'aggregateId' },
        },
      })),
    ];
    const out = await target.db.send(
      new TransactWriteItemsCommand({ TransactItems, ReturnConsumedCapacity: 'TOTAL' }),
    );
    const byTable: Record<string, number> = {};
    for (const w of itemWrites('TransactWriteItems', { TransactItems }, partitionKeyOf)) {
      byTable[w.table] = (byTable[w.table] ?? 0) + w.units;
    }
    expect(byTable).toEqual(
      Object.fromEntries((out.ConsumedCapacity ?? []).map((c) => [c.TableName, c.CapacityUnits])),
    );
  });
});
