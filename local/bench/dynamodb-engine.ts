import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';

/**
 * The DynamoDB server's CPU per call, as docs/decisions/0001-local-dynamodb-engine.md
 * compares the candidates: a server in a process of its own, one table with a
 * stream, 300 puts of warm-up, then conditional puts, consistent gets and
 * two-put transactions one at a time through the AWS SDK; the server's CPU
 * time (Linux /proc) over each kind, divided by its calls.
 *
 *   npx tsx local/bench/dynamodb-engine.ts                     # this project's engine
 *   npx tsx local/bench/dynamodb-engine.ts --endpoint URL --pid PID   # another server already running
 */
const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    pid: { type: 'string' },
    puts: { type: 'string', default: '2000' },
    gets: { type: 'string', default: '2000' },
    transactions: { type: 'string', default: '500' },
  },
});

const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function engineServer(): Promise<{ endpoint: string; pid: number; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(__dirname, '..', 'test', 'fixtures', 'dynamodb-server.ts')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const endpoint = await new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
  });
  return { endpoint, pid: child.pid!, stop: () => child.kill() };
}

async function main() {
  const server = values.endpoint
    ? { endpoint: values.endpoint, pid: Number(values.pid), stop: () => undefined }
    : await engineServer();
  const client = new DynamoDBClient({
    endpoint: server.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  const TableName = `bench${Date.now()}`;
  await client.send(
    new CreateTableCommand({
      TableName,
      KeySchema: [
        { AttributeName: 'id', KeyType: 'HASH' },
        { AttributeName: 'v', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'S' },
        { AttributeName: 'v', AttributeType: 'N' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  // Some servers create a table in the background (CREATING first, as DynamoDB does).
  while ((await client.send(new DescribeTableCommand({ TableName }))).Table?.TableStatus !== 'ACTIVE') {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const item = (id: string, v: number) => ({
    id: { S: id },
    v: { N: String(v) },
    data: { S: 'x'.repeat(200) },
    state: { M: { total: { N: '1234' }, status: { S: 'PENDING' } } },
  });
  const put = (id: string, v = 1) =>
    client.send(
      new PutItemCommand({ TableName, Item: item(id, v), ConditionExpression: 'attribute_not_exists(id)' }),
    );
  for (let i = 0; i < 300; i++) await put(`warm${i}`);

  const measure = async (label: string, calls: number, call: (i: number) => Promise<unknown>) => {
    const before = cpuMs(server.pid);
    const started = performance.now();
    for (let i = 0; i < calls; i++) await call(i);
    const cpu = cpuMs(server.pid) - before;
    console.log(
      `${label.padEnd(28)} ${(cpu / calls).toFixed(3)} ms CPU per call, ${((performance.now() - started) / calls).toFixed(2)} ms wall`,
    );
  };
  await measure('conditional PutItem', Number(values.puts), (i) => put(`p${i}`));
  await measure('consistent GetItem', Number(values.gets), (i) =>
    client.send(
      new GetItemCommand({ TableName, Key: { id: { S: `p${i}` }, v: { N: '1' } }, ConsistentRead: true }),
    ),
  );
  await measure('TransactWriteItems, two puts', Number(values.transactions), async (i) =>
    client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName, Item: item(`t${i}`, 1), ConditionExpression: 'attribute_not_exists(id)' } },
          { Put: { TableName, Item: item(`u${i}`, 1), ConditionExpression: 'attribute_not_exists(id)' } },
        ],
      }),
    ),
  );
  console.log(`server resident memory: ${rssMb(server.pid).toFixed(0)} MB`);
  client.destroy();
  server.stop();
}

void main();
