import {
  BatchWriteItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import {
  eventually,
  type Item,
  keyed,
  n,
  openTarget,
  refusal,
  SETUP_TIMEOUT_MS,
  s,
  type Target,
} from './support/target';

/**
 * Query as the platform pages through it: the event store (newest first with
 * Limit 1, all events with ExclusiveStartKey), and the sparse KEYS_ONLY
 * indexes the sweepers query with BETWEEN and <= key conditions.
 */
let target: Target;
let events: string; // aggregateId (S) + version (N)
let views: string; // id (S), with the sparse KEYS_ONLY index "expiry" (p (S) + expiresAt (S))
let strings: string; // pk (S) + sk (S)
let binaries: string; // pk (S) + sk (B)

beforeAll(async () => {
  target = await openTarget();
  [events, views, strings, binaries] = await Promise.all([
    target.table({
      ...keyed(['aggregateId', 'S'], ['version', 'N']),
    }),
    target.table({
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'S' },
        { AttributeName: 'p', AttributeType: 'S' },
        { AttributeName: 'expiresAt', AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'expiry',
          KeySchema: [
            { AttributeName: 'p', KeyType: 'HASH' },
            { AttributeName: 'expiresAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    }),
    target.table({
      ...keyed(['pk', 'S'], ['sk', 'S']),
    }),
    target.table({
      ...keyed(['pk', 'S'], ['sk', 'B']),
    }),
  ]);
  // Ten events of one aggregate (versions 1..10) and one of another.
  await target.db.send(
    new BatchWriteItemCommand({
      RequestItems: {
        [events]: [
          ...Array.from({ length: 10 }, (_, i) => ({
            PutRequest: {
              Item: { aggregateId: s('a-1'), version: n(i + 1), kind: s(i % 2 ? 'odd' : 'even') },
            },
          })),
          { PutRequest: { Item: { aggregateId: s('a-2'), version: n(1), kind: s('even') } } },
        ],
      },
    }),
  );
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const query = (input: Omit<QueryCommandInput, 'TableName'> & { TableName?: string }) =>
  target.db.send(new QueryCommand({ TableName: events, ...input }));
const byAggregate = {
  KeyConditionExpression: '#id = :id',
  ExpressionAttributeNames: { '#id': 'aggregateId' },
  ExpressionAttributeValues: { ':id': s('a-1') },
};
const versions = (items: Item[] | undefined) => (items ?? []).map((i) => Number(i.version?.N));

// API Reference, Query: "ScanIndexForward ... If ScanIndexForward is false, DynamoDB reads the results in
// reverse order by sort key value"; "Limit: The maximum number of items to evaluate"; "LastEvaluatedKey
// ... If LastEvaluatedKey is present in the response, you will need to paginate the result set."
describe('Query on the table', () => {
  test('the newest event: ScanIndexForward false, Limit 1, ConsistentRead', async () => {
    const out = await query({ ...byAggregate, ScanIndexForward: false, Limit: 1, ConsistentRead: true });
    expect(out.Items).toEqual([{ aggregateId: s('a-1'), version: n(10), kind: s('odd') }]);
    expect(out.Count).toBe(1);
    expect(out.LastEvaluatedKey).toEqual({ aggregateId: s('a-1'), version: n(10) });
  });

  test('ascending by default, only the partition asked for', async () => {
    const out = await query({ ...byAggregate, ConsistentRead: true });
    expect(versions(out.Items)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(out.LastEvaluatedKey).toBeUndefined();
  });

  test('ExclusiveStartKey pages through every item, forwards and backwards', async () => {
    for (const forward of [true, false]) {
      const seen: number[] = [];
      let start: Item | undefined;
      let pages = 0;
      do {
        const out = await query({
          ...byAggregate,
          ScanIndexForward: forward,
          Limit: 3,
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        });
        seen.push(...versions(out.Items));
        start = out.LastEvaluatedKey;
        pages++;
      } while (start);
      const all = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
      expect(seen).toEqual(forward ? all : all.reverse());
      // Limit 3 over 10 items: pages of 3, 3, 3, 1 (the last without a LastEvaluatedKey).
      expect(pages).toBe(4);
    }
  });

  // API Reference, Query, LastEvaluatedKey: "If LastEvaluatedKey is empty, then the 'last page' of results has
  // been processed"; a read that stops at Limit returns the key it stopped at, even when nothing follows it
  // (Developer Guide, "Paginating table query results": the next page is then empty, without a key).
  test('a page that ends at Limit carries a LastEvaluatedKey even with nothing after it', async () => {
    const first = await query({ ...byAggregate, Limit: 10, ConsistentRead: true });
    expect(first.Count).toBe(10);
    expect(first.LastEvaluatedKey).toEqual({ aggregateId: s('a-1'), version: n(10) });
    const last = await query({
      ...byAggregate,
      ConsistentRead: true,
      ExclusiveStartKey: first.LastEvaluatedKey,
    });
    expect(last.Items).toEqual([]);
    expect(last.LastEvaluatedKey).toBeUndefined();
  });

  // Developer Guide, "Key condition expressions for the Query operation": =, <, <=, >, >=, BETWEEN, begins_with.
  test.each([
    ['#sk BETWEEN :from AND :upTo', { ':from': n(3), ':upTo': n(5) }, [3, 4, 5]],
    ['#sk <= :now', { ':now': n(2) }, [1, 2]],
    ['#sk < :now', { ':now': n(2) }, [1]],
    ['#sk >= :now', { ':now': n(9) }, [9, 10]],
    ['#sk > :now', { ':now': n(9) }, [10]],
    ['#sk = :now', { ':now': n(4) }, [4]],
  ])('key condition #pk = :p AND %s', async (condition, values, expected) => {
    const out = await query({
      KeyConditionExpression: `#pk = :p AND ${condition}`,
      ExpressionAttributeNames: { '#pk': 'aggregateId', '#sk': 'version' },
      ExpressionAttributeValues: { ':p': s('a-1'), ...values },
    });
    expect(versions(out.Items)).toEqual(expected);
  });

  test('begins_with on a string sort key', async () => {
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [strings]: ['2024-01-01', '2024-02-01', '2024-02-15', '2025-02-01'].map((sk) => ({
            PutRequest: { Item: { pk: s('dates'), sk: s(sk) } },
          })),
        },
      }),
    );
    const out = await query({
      TableName: strings,
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':p': s('dates'), ':prefix': s('2024-02') },
    });
    expect(out.Items?.map((i) => i.sk?.S)).toEqual(['2024-02-01', '2024-02-15']);
  });

  // Developer Guide, "Filter expressions for the Query operation": "A filter expression is applied after a
  // Query finishes, but before the results are returned"; Limit counts items read before the filter
  // ("Limiting the number of items in the result set"); ScannedCount counts them too.
  test('FilterExpression applies after Limit; Count and ScannedCount', async () => {
    const out = await query({
      ...byAggregate,
      FilterExpression: 'kind = :k',
      ExpressionAttributeValues: { ...byAggregate.ExpressionAttributeValues, ':k': s('odd') },
      Limit: 4,
    });
    expect(versions(out.Items)).toEqual([2, 4]);
    expect(out.Count).toBe(2);
    expect(out.ScannedCount).toBe(4);
    expect(out.LastEvaluatedKey).toEqual({ aggregateId: s('a-1'), version: n(4) });
  });

  test('Select COUNT returns no Items', async () => {
    const out = await query({ ...byAggregate, Select: 'COUNT' });
    expect(out.Items).toBeUndefined();
    expect(out.Count).toBe(10);
  });

  test('a key condition on a non-key attribute is a ValidationException', async () => {
    const error = await refusal(
      query({ KeyConditionExpression: 'kind = :k', ExpressionAttributeValues: { ':k': s('odd') } }),
    );
    expect(error.name).toBe('ValidationException');
  });

  test('OR in a key condition is a ValidationException', async () => {
    const error = await refusal(
      query({
        KeyConditionExpression: 'aggregateId = :p OR version = :v',
        ExpressionAttributeValues: { ':p': s('a-1'), ':v': n(1) },
      }),
    );
    expect(error.name).toBe('ValidationException');
  });

  // API Reference, Query: "A single Query operation will read up to the maximum number of items set (if
  // using the Limit parameter) or a maximum of 1 MB of data and then apply any filtering to the results
  // using FilterExpression. If LastEvaluatedKey is present in the response, you will need to paginate."
  test('a page stops at 1 MB: twelve items of ~100 KB take more than one page', async () => {
    const big = 'x'.repeat(100 * 1024);
    for (let i = 0; i < 12; i++) {
      await target.db.send(
        new PutItemCommand({
          TableName: events,
          Item: { aggregateId: s('big'), version: n(i), body: s(big) },
        }),
      );
    }
    const first = await query({
      KeyConditionExpression: 'aggregateId = :p',
      ExpressionAttributeValues: { ':p': s('big') },
      ConsistentRead: true,
    });
    expect(first.Count).toBeGreaterThan(0);
    expect(first.Count).toBeLessThan(12);
    expect(first.LastEvaluatedKey).toBeDefined();
    let seen = versions(first.Items);
    let start = first.LastEvaluatedKey;
    while (start) {
      const page = await query({
        KeyConditionExpression: 'aggregateId = :p',
        ExpressionAttributeValues: { ':p': s('big') },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      });
      seen = [...seen, ...versions(page.Items)];
      start = page.LastEvaluatedKey;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });
});

// Developer Guide, "Take advantage of sparse indexes": "For any item in a table, DynamoDB writes a
// corresponding index entry only if the index sort key value is present in the item. If the sort key
// doesn't appear in every table item, the index is said to be sparse." "Projected attributes":
// KEYS_ONLY "Only the index and primary keys are projected into the index."
describe('a sparse KEYS_ONLY global secondary index', () => {
  beforeAll(async () => {
    const items: Item[] = [
      { id: s('r1'), p: s('p0'), expiresAt: s('2024-01-01T00:00:00Z'), qty: n(1) },
      { id: s('r2'), p: s('p0'), expiresAt: s('2024-01-01T00:05:00Z'), qty: n(2) },
      { id: s('r3'), p: s('p0'), expiresAt: s('2024-01-01T00:10:00Z'), qty: n(3) },
      { id: s('r4'), p: s('p1'), expiresAt: s('2024-01-01T00:00:00Z'), qty: n(4) },
      { id: s('r5'), p: s('p0'), qty: n(5) }, // no sort key: not in the index
      { id: s('r6'), qty: n(6) }, // no index key at all
    ];
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: { [views]: items.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  });

  const expiring = (upTo: string, extra: Partial<QueryCommandInput> = {}) =>
    target.db.send(
      new QueryCommand({
        TableName: views,
        IndexName: 'expiry',
        KeyConditionExpression: 'p = :p AND expiresAt <= :now',
        ExpressionAttributeValues: { ':p': s('p0'), ':now': s(upTo) },
        ...extra,
      }),
    );

  test('holds only the items with both index keys, projected to keys', async () => {
    await eventually(async () => {
      const out = await expiring('2024-01-01T00:05:00Z');
      expect(out.Items).toEqual([
        { id: s('r1'), p: s('p0'), expiresAt: s('2024-01-01T00:00:00Z') },
        { id: s('r2'), p: s('p0'), expiresAt: s('2024-01-01T00:05:00Z') },
      ]);
      const scanned = await target.db.send(new ScanCommand({ TableName: views, IndexName: 'expiry' }));
      expect(scanned.Items?.map((i) => i.id?.S).sort()).toEqual(['r1', 'r2', 'r3', 'r4']);
    });
  });

  test('BETWEEN and paging with the index key in LastEvaluatedKey', async () => {
    await eventually(async () => {
      const first = await target.db.send(
        new QueryCommand({
          TableName: views,
          IndexName: 'expiry',
          KeyConditionExpression: 'p = :p AND expiresAt BETWEEN :from AND :upTo',
          ExpressionAttributeValues: {
            ':p': s('p0'),
            ':from': s('2024-01-01T00:00:00Z'),
            ':upTo': s('2024-01-01T00:10:00Z'),
          },
          Limit: 2,
        }),
      );
      expect(first.Items?.map((i) => i.id?.S)).toEqual(['r1', 'r2']);
      // API Reference, Query, LastEvaluatedKey: for an index, the table's key and the index's key.
      expect(first.LastEvaluatedKey).toEqual({
        id: s('r2'),
        p: s('p0'),
        expiresAt: s('2024-01-01T00:05:00Z'),
      });
      const rest = await expiring('2024-01-01T00:10:00Z', { ExclusiveStartKey: first.LastEvaluatedKey });
      expect(rest.Items?.map((i) => i.id?.S)).toEqual(['r3']);
    });
  });

  test('removing the index key takes the item out of the index', async () => {
    await target.db.send(new PutItemCommand({ TableName: views, Item: { id: s('r3'), qty: n(3) } }));
    await eventually(async () => {
      const out = await expiring('2025-01-01T00:00:00Z');
      expect(out.Items?.map((i) => i.id?.S)).toEqual(['r1', 'r2']);
    });
  });

  // API Reference, Query, ConsistentRead: "Strongly consistent reads are not supported on global secondary
  // indexes. If you query a global secondary index with ConsistentRead set to true, you will receive a
  // ValidationException."
  test('ConsistentRead on a global secondary index is a ValidationException', async () => {
    const error = await refusal(expiring('2025-01-01T00:00:00Z', { ConsistentRead: true }));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Consistent reads are not supported on global secondary indexes');
  });

  // API Reference, Query, Select: ALL_ATTRIBUTES on an index that does not project all attributes is refused.
  test('an index item has only what the index projects: Select ALL_ATTRIBUTES is refused', async () => {
    const error = await refusal(expiring('2025-01-01T00:00:00Z', { Select: 'ALL_ATTRIBUTES' }));
    expect(error.name).toBe('ValidationException');
  });
});

// Developer Guide, "Core components" / "Partition key and sort key": items with the same partition key are
// stored in sorted order by sort key. API Reference, AttributeValue / "Data types" (Developer Guide):
// strings are compared by the bytes of their UTF-8 encoding, numbers numerically, binary values as
// unsigned bytes.
describe('sort key order', () => {
  test('S: UTF-8 byte order (not UTF-16 code units)', async () => {
    // 'ｆ' (U+FF46) is EF BD 86 in UTF-8, '😀' (U+1F600) is F0 9F 98 80: UTF-8 puts 'ｆ' first, while
    // UTF-16 (D83D DE00 vs FF46) and so JavaScript's default string order would put '😀' first.
    const keys = ['😀', 'a', 'ｆ', 'é', 'Z', 'ab', 'A'];
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [strings]: keys.map((sk) => ({ PutRequest: { Item: { pk: s('order'), sk: s(sk) } } })),
        },
      }),
    );
    const out = await target.db.send(
      new QueryCommand({
        TableName: strings,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': s('order') },
        ConsistentRead: true,
      }),
    );
    expect(out.Items?.map((i) => i.sk?.S)).toEqual(['A', 'Z', 'a', 'ab', 'é', 'ｆ', '😀']);
    const between = await target.db.send(
      new QueryCommand({
        TableName: strings,
        KeyConditionExpression: 'pk = :p AND sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: { ':p': s('order'), ':lo': s('é'), ':hi': s('😀') },
        ConsistentRead: true,
      }),
    );
    expect(between.Items?.map((i) => i.sk?.S)).toEqual(['é', 'ｆ', '😀']);
  });

  test('N: numeric order', async () => {
    const numbers = ['10', '-2', '1.5', '0', '-10', '2', '1E+2', '-0.5'];
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [events]: numbers.map((v) => ({
            PutRequest: { Item: { aggregateId: s('numbers'), version: n(v) } },
          })),
        },
      }),
    );
    const out = await query({
      KeyConditionExpression: 'aggregateId = :p',
      ExpressionAttributeValues: { ':p': s('numbers') },
      ConsistentRead: true,
    });
    expect(out.Items?.map((i) => i.version?.N)).toEqual(['-10', '-2', '-0.5', '0', '1.5', '2', '10', '100']);
  });

  test('B: unsigned byte order, a prefix first', async () => {
    const values = [[0x80], [0x01, 0x00], [0xff], [0x00], [0x7f], [0x01]];
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [binaries]: values.map((bytes) => ({
            PutRequest: { Item: { pk: s('bytes'), sk: { B: Uint8Array.from(bytes) } } },
          })),
        },
      }),
    );
    const out = await target.db.send(
      new QueryCommand({
        TableName: binaries,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': s('bytes') },
        ConsistentRead: true,
      }),
    );
    expect(out.Items?.map((i) => [...(i.sk?.B ?? [])])).toEqual([
      [0x00],
      [0x01],
      [0x01, 0x00],
      [0x7f],
      [0x80],
      [0xff],
    ]);
  });
});
