import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type ShardIteratorType,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { keyed, n, ON_AWS, openTarget, refusal, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/**
 * DynamoDB Streams with NEW_AND_OLD_IMAGES, as the projectors read it:
 * one record per changed item, in order per item.
 * Developer Guide, "Change data capture for DynamoDB Streams": "Each stream record appears exactly once in
 * the stream. For each item that is modified in a DynamoDB table, the stream records appear in the same
 * sequence as the actual modifications to the item." "If you perform a PutItem or UpdateItem operation that
 * does not change any data in an item, DynamoDB Streams does not write a stream record for that operation."
 */
let target: Target;
let table: string; // pk (S) + sk (N), stream NEW_AND_OLD_IMAGES
let streamArn: string;
let shardId: string;

beforeAll(async () => {
  target = await openTarget();
  table = await target.table({
    ...keyed(['pk', 'S'], ['sk', 'N']),
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  });
  const described = await target.db.send(new DescribeTableCommand({ TableName: table }));
  streamArn = described.Table?.LatestStreamArn ?? '';
  const stream = await target.streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  shardId = stream.StreamDescription?.Shards?.[0]?.ShardId ?? '';
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const iterator = async (ShardIteratorType: ShardIteratorType, SequenceNumber?: string) =>
  (
    await target.streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ShardIteratorType,
        ...(SequenceNumber ? { SequenceNumber } : {}),
      }),
    )
  ).ShardIterator ?? '';

/**
 * Reads from `from` until `done` holds of what was read (locally: until a
 * read returns nothing; on AWS, records arrive within seconds).
 */
async function readUntil(from: string, done: (records: StreamRecord[]) => boolean, Limit?: number) {
  const records: StreamRecord[] = [];
  let next: string | undefined = from;
  const until = Date.now() + 30_000;
  while (next) {
    const page: GetRecordsCommandOutput = await target.streams.send(
      new GetRecordsCommand({ ShardIterator: next, ...(Limit ? { Limit } : {}) }),
    );
    records.push(...(page.Records ?? []));
    next = page.NextShardIterator;
    if (done(records)) break;
    if ((page.Records ?? []).length === 0) {
      if (!ON_AWS || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  return records;
}

const ofKey = (pk: string) => (records: StreamRecord[]) =>
  records.filter((r) => r.dynamodb?.Keys?.pk?.S === pk);
const sentinel = async (pk: string) =>
  target.db.send(
    new PutItemCommand({ TableName: table, Item: { pk: s(pk), sk: n(0), sentinel: { BOOL: true } } }),
  );
const sawSentinel = (pk: string) => (records: StreamRecord[]) => ofKey(pk)(records).length > 0;

describe('records', () => {
  // API Reference (Streams), Record: eventName "INSERT - a new item was added to the table. MODIFY - one or more
  // of an existing item's attributes were modified. REMOVE - the item was deleted from the table"; StreamRecord:
  // Keys, NewImage, OldImage, SequenceNumber, SizeBytes, StreamViewType.
  test('INSERT, MODIFY and REMOVE with keys, images, sizes and increasing sequence numbers', async () => {
    await target.db.send(
      new PutItemCommand({ TableName: table, Item: { pk: s('life'), sk: n(1), a: n(1) } }),
    );
    await target.db.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: s('life'), sk: n(1) },
        UpdateExpression: 'SET a = :two',
        ExpressionAttributeValues: { ':two': n(2) },
      }),
    );
    await target.db.send(new DeleteItemCommand({ TableName: table, Key: { pk: s('life'), sk: n(1) } }));
    await sentinel('life-end');
    const records = ofKey('life')(await readUntil(await iterator('TRIM_HORIZON'), sawSentinel('life-end')));
    expect(records.map((r) => r.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    const [insert, modify, remove] = records.map((r) => r.dynamodb);
    const key = { pk: s('life'), sk: n(1) };
    expect(insert).toMatchObject({
      Keys: key,
      NewImage: { ...key, a: n(1) },
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    });
    expect(insert?.OldImage).toBeUndefined();
    expect(modify).toMatchObject({ Keys: key, OldImage: { ...key, a: n(1) }, NewImage: { ...key, a: n(2) } });
    expect(remove).toMatchObject({ Keys: key, OldImage: { ...key, a: n(2) } });
    expect(remove?.NewImage).toBeUndefined();
    for (const record of records) {
      expect(record.eventSource).toBe('aws:dynamodb');
      expect(record.dynamodb?.SizeBytes).toBeGreaterThan(0);
      expect(record.dynamodb?.ApproximateCreationDateTime).toBeInstanceOf(Date);
    }
    const sequence = records.map((r) => BigInt(r.dynamodb?.SequenceNumber ?? '0'));
    expect(sequence[0]! < sequence[1]! && sequence[1]! < sequence[2]!).toBe(true);
  });

  test('no record for a write that changes nothing', async () => {
    const item = { pk: s('same'), sk: n(1), a: s('x') };
    await target.db.send(new PutItemCommand({ TableName: table, Item: item }));
    await target.db.send(new PutItemCommand({ TableName: table, Item: item }));
    await target.db.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: s('same'), sk: n(1) },
        UpdateExpression: 'SET a = :x',
        ExpressionAttributeValues: { ':x': s('x') },
      }),
    );
    await target.db.send(new DeleteItemCommand({ TableName: table, Key: { pk: s('same'), sk: n(2) } }));
    await sentinel('same-end');
    const records = ofKey('same')(await readUntil(await iterator('TRIM_HORIZON'), sawSentinel('same-end')));
    expect(records.map((r) => r.eventName)).toEqual(['INSERT']);
  });

  test('in order per item', async () => {
    for (let v = 1; v <= 20; v++) {
      await target.db.send(
        new PutItemCommand({ TableName: table, Item: { pk: s('order'), sk: n(1), v: n(v) } }),
      );
    }
    await sentinel('order-end');
    const records = ofKey('order')(await readUntil(await iterator('TRIM_HORIZON'), sawSentinel('order-end')));
    expect(records.map((r) => Number(r.dynamodb?.NewImage?.v?.N))).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  // Developer Guide, "DynamoDB Streams and transactions" / "Change data capture": a transaction's writes appear
  // as one record per item written; a condition check writes nothing, a cancelled transaction nothing.
  test('one record per item of a transaction; none for a condition check or a cancelled transaction', async () => {
    await target.db.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: table, Item: { pk: s('tx'), sk: n(1) } } },
          { Put: { TableName: table, Item: { pk: s('tx'), sk: n(2) } } },
          { Put: { TableName: table, Item: { pk: s('tx'), sk: n(3) } } },
          {
            ConditionCheck: {
              TableName: table,
              Key: { pk: s('tx'), sk: n(4) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
    const cancelled = await refusal(
      target.db.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { pk: s('tx'), sk: n(5) } } },
            {
              Put: {
                TableName: table,
                Item: { pk: s('tx'), sk: n(1) },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      ),
    );
    expect(cancelled.name).toBe('TransactionCanceledException');
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: { [table]: [6, 7].map((sk) => ({ PutRequest: { Item: { pk: s('tx'), sk: n(sk) } } })) },
      }),
    );
    await sentinel('tx-end');
    const records = ofKey('tx')(await readUntil(await iterator('TRIM_HORIZON'), sawSentinel('tx-end')));
    expect(records.map((r) => `${r.eventName} ${r.dynamodb?.Keys?.sk?.N}`).sort()).toEqual([
      'INSERT 1',
      'INSERT 2',
      'INSERT 3',
      'INSERT 6',
      'INSERT 7',
    ]);
  });
});

// API Reference (Streams), GetShardIterator, ShardIteratorType: "AT_SEQUENCE_NUMBER - Start reading exactly from
// the position denoted by a specific sequence number. AFTER_SEQUENCE_NUMBER - Start reading right after the
// position denoted by a specific sequence number. TRIM_HORIZON - Start reading at the last (untrimmed) stream
// record, which is the oldest record in the shard. LATEST - Start reading just after the most recent stream
// record in the shard, so that you always read the most recent data in the shard."
describe('iterators', () => {
  test('AT_SEQUENCE_NUMBER and AFTER_SEQUENCE_NUMBER', async () => {
    for (let v = 1; v <= 3; v++) {
      await target.db.send(new PutItemCommand({ TableName: table, Item: { pk: s('seq'), sk: n(v) } }));
    }
    await sentinel('seq-end');
    const records = ofKey('seq')(await readUntil(await iterator('TRIM_HORIZON'), sawSentinel('seq-end')));
    const second = records[1]?.dynamodb?.SequenceNumber ?? '';
    const at = await readUntil(await iterator('AT_SEQUENCE_NUMBER', second), (r) => r.length > 0);
    expect(at[0]?.dynamodb?.Keys).toEqual({ pk: s('seq'), sk: n(2) });
    const after = await readUntil(await iterator('AFTER_SEQUENCE_NUMBER', second), (r) => r.length > 0);
    expect(after[0]?.dynamodb?.Keys).toEqual({ pk: s('seq'), sk: n(3) });
  });

  test('LATEST reads only what is written after the iterator', async () => {
    await target.db.send(
      new PutItemCommand({ TableName: table, Item: { pk: s('before-latest'), sk: n(1) } }),
    );
    const latest = await iterator('LATEST');
    await target.db.send(new PutItemCommand({ TableName: table, Item: { pk: s('after-latest'), sk: n(1) } }));
    const records = await readUntil(latest, (r) => r.length > 0);
    expect(records.map((r) => r.dynamodb?.Keys?.pk?.S)).toEqual(['after-latest']);
  });

  test('an empty read still returns a NextShardIterator, which sees later records', async () => {
    const latest = await iterator('LATEST');
    const empty = await target.streams.send(new GetRecordsCommand({ ShardIterator: latest }));
    expect(empty.Records).toEqual([]);
    expect(empty.NextShardIterator).toBeDefined();
    await target.db.send(new PutItemCommand({ TableName: table, Item: { pk: s('later'), sk: n(1) } }));
    const records = await readUntil(empty.NextShardIterator ?? '', (r) => r.length > 0);
    expect(records.map((r) => r.dynamodb?.Keys?.pk?.S)).toEqual(['later']);
  });
});

// API Reference (Streams), GetRecords, Limit: "The maximum number of records to return from the shard. The upper
// limit is 1000." "Valid Range: Minimum value of 1. Maximum value of 1000."
describe('GetRecords Limit', () => {
  test('Limit 1 returns one record at a time and NextShardIterator continues after it', async () => {
    const from = await iterator('TRIM_HORIZON');
    const first = await target.streams.send(new GetRecordsCommand({ ShardIterator: from, Limit: 1 }));
    expect((first.Records ?? []).length).toBeLessThanOrEqual(1);
    const all = await readUntil(from, () => false);
    const oneByOne = await readUntil(from, () => false, 1);
    expect(oneByOne.map((r) => r.dynamodb?.SequenceNumber)).toEqual(
      all.map((r) => r.dynamodb?.SequenceNumber),
    );
    if (!ON_AWS) expect(first.Records).toHaveLength(1);
  });

  test.each([0, 1001])('Limit %i is a ValidationException', async (Limit) => {
    const error = await refusal(
      target.streams.send(new GetRecordsCommand({ ShardIterator: await iterator('TRIM_HORIZON'), Limit })),
    );
    expect(error.name).toBe('ValidationException');
  });
});
