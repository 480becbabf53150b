// Starts its own DynamoDB Local (independent of the integration globalSetup)
// and checks that it listens on 127.0.0.1 only, serves tables with streams,
// answers from a table's metadata as it is now (the launcher caches it),
// writes the stream records DynamoDB Local's own code writes (the launcher
// replaces that code), and is gone after stop().
import { readFileSync } from 'node:fs';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { type DynamoDbLocal, defaultJvmFlags, startDynamoDbLocal } from '../../dynamodb';

const LISTEN = '0A';
// The first run fetches the jars with Maven; a cold JVM start takes a few seconds.
const START_TIMEOUT_MS = 180_000;

/** Local addresses (hex, as in /proc/net/tcp*) of sockets listening on `port`. */
function listeners(port: number): { file: string; address: string }[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: { file: string; address: string }[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local || fields[3] !== LISTEN) continue;
      const [address, portHex] = local.split(':');
      if (portHex === hexPort && address) found.push({ file, address });
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A DynamoDB and a DynamoDB Streams client of a DynamoDB Local (the first test starts the suite's). */
function clientsOf(ddb: DynamoDbLocal | undefined) {
  if (!ddb) throw new Error('DynamoDB Local did not start');
  const config = {
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  return { client: new DynamoDBClient(config), streams: new DynamoDBStreamsClient(config) };
}

describe('DynamoDB Local', () => {
  let ddb: DynamoDbLocal | undefined;

  afterAll(async () => {
    await ddb?.stop();
  });

  it(
    'starts on a free port bound to 127.0.0.1 only',
    async () => {
      ddb = await startDynamoDbLocal();
      expect(ddb.port).toBeGreaterThan(0);
      expect(ddb.endpoint).toBe(`http://127.0.0.1:${ddb.port}`);
      expect(isAlive(ddb.pid)).toBe(true);

      const sockets = listeners(ddb.port);
      // 127.0.0.1 in /proc/net/tcp is 0100007F (little-endian); the IPv4-mapped
      // form in tcp6 would be 0000000000000000FFFF00000100007F.
      expect(sockets).toEqual([{ file: '/proc/net/tcp', address: '0100007F' }]);
      expect(sockets.some((s) => /^0+$/.test(s.address))).toBe(false);
    },
    START_TIMEOUT_MS,
  );

  it('serves a table with a NEW_AND_OLD_IMAGES stream', async () => {
    const { client, streams } = clientsOf(ddb);
    try {
      const created = await client.send(
        new CreateTableCommand({
          TableName: 'dynamodb-local-test',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        }),
      );
      const streamArn = created.TableDescription?.LatestStreamArn;
      expect(streamArn).toBeDefined();
      const table = await client.send(new DescribeTableCommand({ TableName: 'dynamodb-local-test' }));
      expect(table.Table?.StreamSpecification?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');

      await client.send(
        new PutItemCommand({
          TableName: 'dynamodb-local-test',
          Item: { pk: { S: 'order#1' }, status: { S: 'PLACED' } },
        }),
      );

      const stream = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
      const shardId = stream.StreamDescription?.Shards?.[0]?.ShardId;
      expect(shardId).toBeDefined();
      const iterator = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      );
      const { Records } = await streams.send(
        new GetRecordsCommand({ ShardIterator: iterator.ShardIterator }),
      );
      expect(Records).toHaveLength(1);
      const record = Records?.[0];
      expect(record?.eventName).toBe('INSERT');
      expect(record?.dynamodb?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
      expect(record?.dynamodb?.Keys).toEqual({ pk: { S: 'order#1' } });
      expect(record?.dynamodb?.NewImage).toEqual({ pk: { S: 'order#1' }, status: { S: 'PLACED' } });
      expect(record?.dynamodb?.OldImage).toBeUndefined();
    } finally {
      client.destroy();
      streams.destroy();
    }
  });

  it("answers every call from the table's metadata as it is now, changed or not", async () => {
    const { client, streams } = clientsOf(ddb);
    const TableName = 'dynamodb-local-metadata';
    const put = (Item: Record<string, { S: string } | { N: string }>) =>
      client.send(new PutItemCommand({ TableName, Item }));
    const transactPut = (Item: Record<string, { S: string } | { N: string }>) =>
      client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName, Item } }] }));
    try {
      await client.send(
        new CreateTableCommand({
          TableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        }),
      );
      // Read (and so cached) by both paths before the table changes.
      await put({ pk: { S: 'a' } });
      await transactPut({ pk: { S: 'b' } });

      // The same name with another key and no stream.
      await client.send(new DeleteTableCommand({ TableName }));
      await client.send(
        new CreateTableCommand({
          TableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        }),
      );
      await expect(put({ pk: { S: 'a' } })).rejects.toMatchObject({ name: 'ValidationException' });
      await expect(transactPut({ pk: { S: 'b' } })).rejects.toMatchObject({ name: 'ValidationException' });
      await put({ id: { N: '1' } });
      await transactPut({ id: { N: '2' } });
      const described = await client.send(new DescribeTableCommand({ TableName }));
      expect(described.Table?.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
      expect(described.Table?.StreamSpecification?.StreamEnabled ?? false).toBe(false);

      // A stream turned on: the next writes are in it, by either path.
      const updated = await client.send(
        new UpdateTableCommand({
          TableName,
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'KEYS_ONLY' },
        }),
      );
      const streamArn = updated.TableDescription?.LatestStreamArn;
      expect(streamArn).toBeDefined();
      await put({ id: { N: '3' } });
      await transactPut({ id: { N: '4' } });
      const stream = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
      const iterator = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: stream.StreamDescription?.Shards?.[0]?.ShardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      );
      const { Records } = await streams.send(
        new GetRecordsCommand({ ShardIterator: iterator.ShardIterator }),
      );
      expect(Records?.map((r) => [r.eventName, r.dynamodb?.StreamViewType, r.dynamodb?.Keys])).toEqual([
        ['INSERT', 'KEYS_ONLY', { id: { N: '3' } }],
        ['INSERT', 'KEYS_ONLY', { id: { N: '4' } }],
      ]);

      await client.send(
        new UpdateTimeToLiveCommand({
          TableName,
          TimeToLiveSpecification: { Enabled: true, AttributeName: 'expiresAt' },
        }),
      );
      const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName }));
      expect(ttl.TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
    } finally {
      client.destroy();
      streams.destroy();
    }
  });

  it(
    "writes the same stream records as DynamoDB Local's own code, for every write and view type",
    async () => {
      // The launcher replaces the body that appends a stream record (StreamRecordWrites.java); with
      // -Dlauncher.streamRecords=dynamodb-local it keeps DynamoDB Local's. The suite's instance could
      // not have started had the replacement failed (the launcher exits), so it is the replaced one.
      const own = await startDynamoDbLocal({
        jvmFlags: [...defaultJvmFlags(256), '-Dlauncher.streamRecords=dynamodb-local'],
      });
      try {
        const [replaced, original] = await Promise.all([streamRecordsOf(ddb), streamRecordsOf(own)]);
        expect(replaced.length).toBeGreaterThan(30);
        expect(replaced).toEqual(original);
      } finally {
        await own.stop();
      }
    },
    START_TIMEOUT_MS,
  );

  it(
    "answers every expression as DynamoDB Local's own parser does, each sent twice",
    async () => {
      // The launcher keeps what DynamoDB Local's expression parser parsed (ParsedExpressions in
      // Launcher.java); -Dlauncher.expressions=dynamodb-local parses every time, as DynamoDB Local does.
      const own = await startDynamoDbLocal({
        jvmFlags: [...defaultJvmFlags(256), '-Dlauncher.expressions=dynamodb-local'],
      });
      try {
        const [cached, original] = await Promise.all([expressionOutcomesOf(ddb), expressionOutcomesOf(own)]);
        expect(cached).toEqual(original);
        // Each call went twice; the second of a malformed one is refused like the first.
        const outcome = (label: string) => cached.filter((o) => o.label === label).map((o) => o.outcome);
        expect(outcome('put if absent')).toEqual(['ok', 'ConditionalCheckFailedException']);
        expect(outcome('condition unclosed')).toEqual(['ValidationException', 'ValidationException']);
        expect(outcome('name key malformed')).toEqual(['ValidationException', 'ValidationException']);
        expect(outcome('value key malformed')).toEqual(['ValidationException', 'ValidationException']);
        expect(outcome('redundant parentheses')).toEqual(['ValidationException', 'ValidationException']);
        expect(outcome('update under the limit')).toEqual(['ok', 'ok']);
        expect(outcome('update over the limit')).toEqual([
          'ConditionalCheckFailedException',
          'ConditionalCheckFailedException',
        ]);
      } finally {
        await own.stop();
      }
    },
    START_TIMEOUT_MS,
  );

  it('stop() ends the JVM and frees the port', async () => {
    if (!ddb) throw new Error('DynamoDB Local did not start');
    const { pid, port } = ddb;
    await ddb.stop();
    await ddb.stop(); // idempotent
    expect(isAlive(pid)).toBe(false);
    expect(listeners(port)).toEqual([]);
  });
});

/** Every kind of attribute, changed a little by `n`. */
const itemOf = (pk: string, n: number): Record<string, AttributeValue> => ({
  pk: { S: pk },
  n: { N: String(n) },
  state: {
    M: {
      status: { S: n % 2 === 0 ? 'PENDING' : 'CONFIRMED' },
      items: { L: [{ M: { sku: { S: `sku-${n}` }, qty: { N: '2' } } }, { NULL: true }] },
      tags: { SS: ['a', `t${n}`] },
      sizes: { NS: ['1', String(n + 2)] },
      blob: { B: Buffer.from(`bytes ${n}`) },
      flag: { BOOL: n % 3 === 0 },
    },
  },
});

/**
 * Runs one sequence of writes on `ddb` (every write that appends a stream
 * record, on tables of each view type, and a stream turned off and on again
 * with another view type), then returns every record of every stream, in
 * order, without what differs between two servers (ids, sequence numbers,
 * times).
 */
async function streamRecordsOf(ddb: DynamoDbLocal | undefined) {
  const { client, streams } = clientsOf(ddb);
  const viewTypes = ['NEW_AND_OLD_IMAGES', 'NEW_IMAGE', 'OLD_IMAGE', 'KEYS_ONLY'] as const;
  try {
    for (const viewType of viewTypes) {
      const TableName = `stream-records-${viewType}`;
      await client.send(
        new CreateTableCommand({
          TableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          StreamSpecification: { StreamEnabled: true, StreamViewType: viewType },
        }),
      );
      await client.send(new PutItemCommand({ TableName, Item: itemOf('a', 1) }));
      await client.send(new PutItemCommand({ TableName, Item: itemOf('a', 2) }));
      await client.send(
        new UpdateItemCommand({
          TableName,
          Key: { pk: { S: 'a' } },
          UpdateExpression: 'SET #n = #n + :one, #extra = :extra REMOVE #state.#flag',
          ExpressionAttributeNames: { '#n': 'n', '#extra': 'extra', '#state': 'state', '#flag': 'flag' },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':extra': { S: 'x' } },
        }),
      );
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName, Item: itemOf('b', 3) } },
            {
              Update: {
                TableName,
                Key: { pk: { S: 'a' } },
                UpdateExpression: 'SET #n = :n',
                ExpressionAttributeNames: { '#n': 'n' },
                ExpressionAttributeValues: { ':n': { N: '10' } },
              },
            },
            { Put: { TableName, Item: itemOf('c', 4) } },
          ],
        }),
      );
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [{ Delete: { TableName, Key: { pk: { S: 'c' } } } }],
        }),
      );
      await client.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [TableName]: [
              { PutRequest: { Item: itemOf('d', 5) } },
              { DeleteRequest: { Key: { pk: { S: 'b' } } } },
            ],
          },
        }),
      );
      await client.send(new DeleteItemCommand({ TableName, Key: { pk: { S: 'a' } } }));
    }
    // A stream turned off, then on with another view type: a new stream, whose records have its type.
    const TableName = 'stream-records-NEW_IMAGE';
    await client.send(new UpdateTableCommand({ TableName, StreamSpecification: { StreamEnabled: false } }));
    await client.send(new PutItemCommand({ TableName, Item: itemOf('unstreamed', 6) }));
    await client.send(
      new UpdateTableCommand({
        TableName,
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'OLD_IMAGE' },
      }),
    );
    await client.send(new PutItemCommand({ TableName, Item: itemOf('unstreamed', 7) }));
    await client.send(new DeleteItemCommand({ TableName, Key: { pk: { S: 'd' } } }));

    const { Streams = [] } = await streams.send(new ListStreamsCommand({}));
    // By table, then by label (the stream's creation time), the same order on both servers.
    const ours = Streams.filter((stream) => stream.TableName?.startsWith('stream-records-')).sort(
      (a, b) =>
        (a.TableName ?? '').localeCompare(b.TableName ?? '') ||
        (a.StreamLabel ?? '').localeCompare(b.StreamLabel ?? ''),
    );
    expect(ours).toHaveLength(viewTypes.length + 1);
    const records: unknown[] = [];
    for (const { StreamArn, TableName: table } of ours) {
      const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn }));
      for (const shard of StreamDescription?.Shards ?? []) {
        const { ShardIterator } = await streams.send(
          new GetShardIteratorCommand({
            StreamArn,
            ShardId: shard.ShardId,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        );
        const { Records = [] } = await streams.send(new GetRecordsCommand({ ShardIterator }));
        for (const { eventID, dynamodb, ...record } of Records) {
          expect(eventID).toEqual(expect.any(String));
          const { SequenceNumber, ApproximateCreationDateTime, ...change } = dynamodb ?? {};
          expect(SequenceNumber).toEqual(expect.any(String));
          expect(ApproximateCreationDateTime).toBeInstanceOf(Date);
          records.push({ table, viewType: StreamDescription?.StreamViewType, ...record, ...change });
        }
      }
    }
    return records;
  } finally {
    client.destroy();
    streams.destroy();
  }
}

/**
 * Sends each of a list of calls with expressions twice to `ddb` (well formed
 * and not, placeholders well formed and not) and returns, for each, what came
 * back: the items or attributes answered, or the error's name and message.
 */
async function expressionOutcomesOf(ddb: DynamoDbLocal | undefined) {
  const { client, streams } = clientsOf(ddb);
  streams.destroy();
  const TableName = 'expressions';
  const names = { '#pk': 'pk', '#sk': 'sk', '#n': 'n' };
  const key = (sk: number) => ({ pk: { S: 'p' }, sk: { N: String(sk) } });
  const update = (max: number) =>
    new UpdateItemCommand({
      TableName,
      Key: key(1),
      UpdateExpression: 'SET #note = :note ADD #n :one REMOVE #gone',
      ConditionExpression: 'attribute_exists(#pk) AND #n < :max',
      ExpressionAttributeNames: { '#pk': 'pk', '#n': 'n', '#note': 'note', '#gone': 'gone' },
      ExpressionAttributeValues: {
        ':note': { S: `under ${max}` },
        ':one': { N: '1' },
        ':max': { N: String(max) },
      },
      ReturnValues: 'ALL_NEW',
    });
  const calls: [string, () => Promise<unknown>][] = [
    [
      'put if absent',
      () =>
        client.send(
          new PutItemCommand({
            TableName,
            Item: { ...key(1), n: { N: '0' }, gone: { S: 'x' } },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': 'pk' },
          }),
        ),
    ],
    ['update under the limit', () => client.send(update(10))],
    ['update over the limit', () => client.send(update(1))],
    [
      'query',
      () =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
            FilterExpression: 'size(#note) > :zero OR attribute_type(#n, :type)',
            ProjectionExpression: '#sk, #n, #note',
            ExpressionAttributeNames: { ...names, '#note': 'note' },
            ExpressionAttributeValues: {
              ':pk': { S: 'p' },
              ':lo': { N: '0' },
              ':hi': { N: '5' },
              ':zero': { N: '0' },
              ':type': { S: 'N' },
            },
            ConsistentRead: true,
          }),
        ),
    ],
    [
      'condition unclosed',
      () =>
        client.send(
          new PutItemCommand({
            TableName,
            Item: key(2),
            ConditionExpression: 'attribute_not_exists(#pk',
            ExpressionAttributeNames: { '#pk': 'pk' },
          }),
        ),
    ],
    [
      'name key malformed',
      () =>
        client.send(
          new PutItemCommand({
            TableName,
            Item: key(2),
            ConditionExpression: 'attribute_not_exists(pk)',
            ExpressionAttributeNames: { '#bad key': 'pk' },
          }),
        ),
    ],
    [
      'value key malformed',
      () =>
        client.send(
          new PutItemCommand({
            TableName,
            Item: key(2),
            ConditionExpression: 'attribute_not_exists(pk)',
            ExpressionAttributeValues: { ':bad-key': { S: 'x' } },
          }),
        ),
    ],
    [
      'redundant parentheses',
      () =>
        client.send(
          new PutItemCommand({
            TableName,
            Item: key(3),
            ConditionExpression: '((attribute_not_exists(#pk)))',
            ExpressionAttributeNames: { '#pk': 'pk' },
          }),
        ),
    ],
    [
      'update malformed',
      () =>
        client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(1),
            UpdateExpression: 'SET #n = ',
            ExpressionAttributeNames: { '#n': 'n' },
          }),
        ),
    ],
    [
      'projection malformed',
      () => client.send(new GetItemCommand({ TableName, Key: key(1), ProjectionExpression: 'n,, sk' })),
    ],
  ];
  try {
    await client.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'N' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    const outcomes: { label: string; outcome: string; answer?: unknown }[] = [];
    for (const [label, call] of calls) {
      for (let time = 0; time < 2; time++) {
        try {
          const { $metadata, ...answer } = (await call()) as { $metadata: unknown };
          outcomes.push({ label, outcome: 'ok', answer });
        } catch (error) {
          const { name, message } = error as Error;
          outcomes.push({ label, outcome: name, answer: message });
        }
      }
    }
    return outcomes;
  } finally {
    client.destroy();
  }
}
