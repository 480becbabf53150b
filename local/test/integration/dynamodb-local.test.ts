// Starts its own DynamoDB Local (independent of the integration globalSetup)
// and checks that it listens on 127.0.0.1 only, serves tables with streams,
// answers from a table's metadata as it is now (the launcher caches it), and
// is gone after stop().
import { readFileSync } from 'node:fs';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../dynamodb';

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

/** A DynamoDB and a DynamoDB Streams client of the DynamoDB Local that the first test started. */
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

  it('stop() ends the JVM and frees the port', async () => {
    if (!ddb) throw new Error('DynamoDB Local did not start');
    const { pid, port } = ddb;
    await ddb.stop();
    await ddb.stop(); // idempotent
    expect(isAlive(pid)).toBe(false);
    expect(listeners(port)).toEqual([]);
  });
});
