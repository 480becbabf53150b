import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { DynamoDbDocuments } from '../functions/shared/dynamodb-documents';

/**
 * What a DynamoDB call costs the calling thread (a function's sandbox): the
 * functions' client (functions/shared/dynamodb-documents.ts) against the AWS
 * SDK's document client as the functions configured it before
 * (docs/decisions/0011-dynamodb-json-client.md), calling the engine in a
 * process of its own; this thread's CPU time per call is the client's alone.
 * Rounds alternate the two clients, so a host that slows down mid-run slows both.
 *
 *   npx tsx scripts/bench-dynamodb-client.ts [--rounds 15] [--calls 200]
 */
const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, calls: { type: 'string', default: '200' } },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const TABLE = 'bench';

/** The engine in a process of its own (as local/bench/dynamodb-engine.ts runs it). */
async function engineServer(): Promise<{ endpoint: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(__dirname, '..', 'local', 'test', 'fixtures', 'dynamodb-server.ts')],
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
  // Stopped with this process, also when a call fails and the benchmark ends early.
  process.on('exit', () => child.kill());
  return { endpoint, stop: () => child.kill() };
}

/** The two clients on `endpoint`, its table made, and the item every Query reads (three events). */
async function clientsOn(endpoint: string) {
  const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };
  // As the functions configured it before: keep-alive sockets (the SDK's default agent keeps them alive too).
  const base = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials });
  await base.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'S' },
        { AttributeName: 'v', AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'id', KeyType: 'HASH' },
        { AttributeName: 'v', KeyType: 'RANGE' },
      ],
    }),
  );
  const marshallOptions = { removeUndefinedValues: true, convertClassInstanceToMap: false };
  const sdk = DynamoDBDocumentClient.from(base, { marshallOptions });
  const ours = new DynamoDbDocuments({
    endpoint: endpoint,
    region: 'us-east-1',
    credentials,
    retryStrategy: new StandardRetryStrategy(3),
    marshallOptions,
  });
  // An event item as the store writes them: its event, and the state folded up to it.
  const event = (id: string, v: number) => ({
    id,
    v,
    type: 'OrderPlaced',
    eventId: `${id}-${v}`,
    occurredAt: new Date().toISOString(),
    correlationId: 'c'.repeat(36),
    data: { customerId: 'cus_1', lines: [{ productId: 'prd_1', quantity: 2, priceCents: 1299 }] },
    state: { status: 'PENDING', totalCents: 2598 },
  });
  for (let v = 1; v <= 3; v++) await ours.put({ TableName: TABLE, Item: event('ord_q', v) });
  // A fresh input per call: the SDK's document client marshals its input's values in place.
  const query = (): QueryCommandInput => ({
    TableName: TABLE,
    KeyConditionExpression: 'id = :id',
    ExpressionAttributeValues: { ':id': 'ord_q' },
    ConsistentRead: true,
  });
  return { base, sdk, ours, query, event };
}

/** Each kind of call the functions make most, through either client. */
function callKinds(
  sdk: DynamoDBDocumentClient,
  ours: DynamoDbDocuments,
  query: () => QueryCommandInput,
  event: (id: string, v: number) => Record<string, unknown>,
) {
  let n = 0;
  return {
    'Query, 3 items': {
      sdk: () => sdk.send(new QueryCommand(query())),
      ours: () => ours.query(query()),
    },
    'GetItem, consistent': {
      sdk: () =>
        sdk.send(new GetCommand({ TableName: TABLE, Key: { id: 'ord_q', v: 1 }, ConsistentRead: true })),
      ours: () => ours.get({ TableName: TABLE, Key: { id: 'ord_q', v: 1 }, ConsistentRead: true }),
    },
    'PutItem, conditional': {
      sdk: () =>
        sdk.send(
          new PutCommand({
            TableName: TABLE,
            Item: event(`p${++n}`, 1),
            ConditionExpression: 'attribute_not_exists(id)',
          }),
        ),
      ours: () =>
        ours.put({
          TableName: TABLE,
          Item: event(`p${++n}`, 1),
          ConditionExpression: 'attribute_not_exists(id)',
        }),
    },
    'TransactWriteItems, 2 puts': {
      sdk: () =>
        sdk.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: TABLE, Item: event(`t${++n}`, 1) } },
              { Put: { TableName: TABLE, Item: event(`t${++n}`, 1) } },
            ],
          }),
        ),
      ours: () =>
        ours.transactWrite({
          TransactItems: [
            { Put: { TableName: TABLE, Item: event(`t${++n}`, 1) } },
            { Put: { TableName: TABLE, Item: event(`t${++n}`, 1) } },
          ],
        }),
    },
  };
}

async function main() {
  const ddb = await engineServer();
  const { base, sdk, ours, query, event } = await clientsOn(ddb.endpoint);
  const kinds = callKinds(sdk, ours, query, event);
  const cpuMsPerCall = async (call: () => Promise<unknown>) => {
    const before = process.threadCpuUsage();
    for (let i = 0; i < CALLS; i++) await call();
    const used = process.threadCpuUsage(before);
    return (used.user + used.system) / 1000 / CALLS;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  // Warm both (V8 optimizes each client's code), then alternate.
  for (const kind of Object.values(kinds))
    for (let i = 0; i < 5; i++) await Promise.all([cpuMsPerCall(kind.sdk), cpuMsPerCall(kind.ours)]);
  console.log(
    `${ROUNDS} rounds of ${CALLS} calls each, alternating: the calling thread's CPU per call, ms, median (range)`,
  );
  for (const [label, kind] of Object.entries(kinds)) {
    const sdkMs: number[] = [];
    const oursMs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      sdkMs.push(await cpuMsPerCall(kind.sdk));
      oursMs.push(await cpuMsPerCall(kind.ours));
    }
    console.log(
      `${label.padEnd(28)} SDK ${median(sdkMs).toFixed(3)} (${Math.min(...sdkMs).toFixed(3)}–${Math.max(...sdkMs).toFixed(3)})   ours ${median(oursMs).toFixed(3)} (${Math.min(...oursMs).toFixed(3)}–${Math.max(...oursMs).toFixed(3)})`,
    );
  }
  base.destroy();
  ours.destroy();
  ddb.stop();
}

void main();
