// The pieces `--data-dir` keeps, each on its own (the whole cloud crashed and restarted is
// crash.test.ts): the DynamoDB engine's journal through a SIGKILL, the tables kept or refused at the
// next start, and the dead-letter queues read back.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Assembly } from '../../assembly';
import { resolver } from '../../assembly';
import { dataDirLayout, lockDataDir } from '../../data-dir';
import { DynamoJsonClient } from '../../dynamo-client';
import { DynamoDbEngine, Journal } from '../../dynamodb';
import { LocalQueues } from '../../queues';
import { createTables } from '../../tables';

const START_TIMEOUT_MS = 60_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'local-data-dir-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A template with one stream table, keyed as given. */
const assemblyWith = (sortKey?: string): Assembly =>
  ({
    dir: '',
    stackName: 'Test',
    template: {
      Resources: {
        Orders: {
          Type: 'AWS::DynamoDB::Table',
          Properties: {
            KeySchema: [
              { AttributeName: 'id', KeyType: 'HASH' },
              ...(sortKey ? [{ AttributeName: sortKey, KeyType: 'RANGE' }] : []),
            ],
            AttributeDefinitions: [
              { AttributeName: 'id', AttributeType: 'S' },
              ...(sortKey ? [{ AttributeName: sortKey, AttributeType: 'N' }] : []),
            ],
            StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
          },
        },
      },
    },
  }) as unknown as Assembly;

interface StreamPage {
  Records: { dynamodb: { SequenceNumber: string; Keys: { id: { S: string } } } }[];
}

async function streamAfter(dynamo: DynamoJsonClient, streamArn: string, after?: string) {
  const { StreamDescription } = await dynamo.call<{ StreamDescription: { Shards: { ShardId: string }[] } }>(
    'DynamoDBStreams_20120810.DescribeStream',
    { StreamArn: streamArn },
  );
  const { ShardIterator } = await dynamo.call<{ ShardIterator: string }>(
    'DynamoDBStreams_20120810.GetShardIterator',
    {
      StreamArn: streamArn,
      ShardId: StreamDescription.Shards[0]!.ShardId,
      ...(after
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
        : { ShardIteratorType: 'TRIM_HORIZON' }),
    },
  );
  const page = await dynamo.call<StreamPage>('DynamoDBStreams_20120810.GetRecords', { ShardIterator });
  return page.Records.map((r) => [r.dynamodb.SequenceNumber, r.dynamodb.Keys.id.S] as const);
}

/** Calls the engine over HTTP, as a function would (DynamoDB's JSON protocol). */
async function call(endpoint: string, target: string, input: unknown) {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${target}` },
    body: JSON.stringify(input),
  });
  if (response.status !== 200) throw new Error(`${target}: ${response.status} ${await response.text()}`);
  return response.json();
}

test(
  'the engine journaled: killed with SIGKILL right after its answers, started again, it has the table, the items and the stream, which goes on',
  async () => {
    const dbDir = dataDirLayout(dir).dynamodb;
    // The engine in a process of its own, so that SIGKILL ends it with nothing flushed or closed.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '..', 'fixtures', 'dynamodb-server.ts'), dbDir],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const endpoint = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /READY (\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the engine exited (${code}) before it was ready`)));
    });
    let streamArn: string;
    let before: (readonly [string, string])[];
    try {
      const created = (await call(endpoint, 'CreateTable', {
        TableName: 'Orders',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
      })) as { TableDescription: { LatestStreamArn: string } };
      streamArn = created.TableDescription.LatestStreamArn;
      for (const id of ['a', 'b'])
        await call(endpoint, 'PutItem', { TableName: 'Orders', Item: { id: { S: id } } });
    } finally {
      // No stop, no flush: the process is gone the moment the answers are in.
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }

    const journal = new Journal(dbDir);
    try {
      const dynamo = new DynamoJsonClient(new DynamoDbEngine(journal));
      before = await streamAfter(dynamo, streamArn);
      expect(before.map(([, id]) => id)).toEqual(['a', 'b']);
      // The table is kept, not created again: the same stream.
      const again = await createTables(assemblyWith(), resolver(assemblyWith()), dynamo);
      expect(again.get('Orders')!.streamArn).toBe(streamArn);
      const item = await dynamo.call<{ Item?: unknown }>('DynamoDB_20120810.GetItem', {
        TableName: 'Orders',
        Key: { id: { S: 'b' } },
        ConsistentRead: true,
      });
      expect(item.Item).toEqual({ id: { S: 'b' } });
      // The stream has its records, and goes on after them: a poller resumes after the last it handled.
      await dynamo.call('DynamoDB_20120810.PutItem', { TableName: 'Orders', Item: { id: { S: 'c' } } });
      const after = await streamAfter(dynamo, streamArn, before[1]![0]);
      expect(after.map(([, id]) => id)).toEqual(['c']);
      expect(BigInt(after[0]![0])).toBeGreaterThan(BigInt(before[1]![0]));

      // A template whose table differs from the kept one is refused, not run on it.
      await expect(
        createTables(assemblyWith('version'), resolver(assemblyWith('version')), dynamo),
      ).rejects.toThrow(/table Orders kept from an earlier start differs from the template \(key schema\)/);
    } finally {
      journal.close();
    }
  },
  START_TIMEOUT_MS,
);

test('the dead-letter queues are read back at start, a torn last append left out', () => {
  const assembly = {
    dir: '',
    stackName: 'Test',
    template: { Resources: { SweepDlq: { Type: 'AWS::SQS::Queue', Properties: {} } } },
  } as unknown as Assembly;
  const deadLetters = dataDirLayout(dir).deadLetters;
  const queues = new LocalQueues(assembly, deadLetters, true);
  const [arn] = queues.arns;
  void queues.send(arn!, { first: true });
  void queues.send(arn!, { second: true });
  const file = join(deadLetters, `${arn!.split(':').at(-1)}.jsonl`);
  // The process died in the middle of a third append.
  appendFileSync(file, '{"messageId":"x","bo');

  const resumed = new LocalQueues(assembly, deadLetters, true);
  expect(resumed.messages(arn!).map((m) => JSON.parse(m.body))).toEqual([{ first: true }, { second: true }]);
  void resumed.send(arn!, { third: true });
  expect(new LocalQueues(assembly, deadLetters, true).messages(arn!)).toHaveLength(3);
  expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(4);
  // Without resuming (no --data-dir), the queues start empty.
  expect(new LocalQueues(assembly, deadLetters).depths()).toEqual({ [arn!.split(':').at(-1)!]: 0 });
});

test('a data directory is held by one cloud at a time; a lock whose process is gone is taken over', () => {
  const layout = dataDirLayout(join(dir, 'locked'));
  const lockFile = join(layout.root, 'lock');
  const release = lockDataDir(layout);
  expect(readFileSync(lockFile, 'utf8')).toBe(String(process.pid));
  release();
  expect(existsSync(lockFile)).toBe(false);
  // Held by a process that runs (the test runner's parent stands in for another cloud).
  writeFileSync(lockFile, String(process.ppid));
  expect(() => lockDataDir(layout)).toThrow(`is in use by process ${process.ppid}`);
  // A process id no process has (beyond Linux's largest): the cloud that held it was killed.
  writeFileSync(lockFile, '4194305');
  const takenOver = lockDataDir(layout);
  expect(readFileSync(lockFile, 'utf8')).toBe(String(process.pid));
  takenOver();
});
