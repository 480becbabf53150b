import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { DynamoJsonClient } from '../dynamo-client';
import { startDynamoDbLocal } from '../dynamodb';

/**
 * A function's CPU per DynamoDB call in its own process, by client: the raw
 * JSON protocol (the local cloud's own client, no signing), the AWS SDK's
 * DynamoDBClient as the functions build it (functions/shared/aws.ts), the
 * same with `cacheMiddleware` (its middleware stack resolved once per command
 * class), and the DocumentClient over it. Half PutItem, half GetItem, one at
 * a time against a DynamoDB Local of its own, after 1,000 calls of warm-up:
 *
 *   npx tsx local/bench/sdk-call.ts --calls 3000 --repeat 3
 */
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '4000' },
    repeat: { type: 'string', default: '3' },
  },
});

type Call = (i: number) => Promise<unknown>;

async function main() {
  const ddb = await startDynamoDbLocal({});
  const raw = new DynamoJsonClient(ddb.port);
  await raw.call('DynamoDB_20120810.CreateTable', {
    TableName: 'bench',
    AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  const config = {
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${ddb.port}`,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 5,
    requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 512 }) }),
  };
  const sdk = new DynamoDBClient(config);
  const docs = DynamoDBDocumentClient.from(sdk, { marshallOptions: { removeUndefinedValues: true } });
  const cached = new DynamoDBClient({ ...config, cacheMiddleware: true });
  // The same item and key for every variant: in the wire's typed form, and as the DocumentClient takes it.
  const key = (i: number) => `item-${i % 1000}`;
  const item = (i: number) => ({ id: key(i), n: i, payload: 'x'.repeat(200), list: [{ sku: 'a', q: 2 }] });
  const wireItem = (i: number) => ({
    id: { S: key(i) },
    n: { N: String(i) },
    payload: { S: 'x'.repeat(200) },
    list: { L: [{ M: { sku: { S: 'a' }, q: { N: '2' } } }] },
  });
  const lowLevel =
    (client: DynamoDBClient): Call =>
    (i) =>
      i % 2
        ? client.send(new GetItemCommand({ TableName: 'bench', Key: { id: { S: key(i) } } }))
        : client.send(new PutItemCommand({ TableName: 'bench', Item: wireItem(i) }));
  const variants: Record<string, Call> = {
    raw: (i) =>
      i % 2
        ? raw.call('DynamoDB_20120810.GetItem', { TableName: 'bench', Key: { id: { S: key(i) } } })
        : raw.call('DynamoDB_20120810.PutItem', { TableName: 'bench', Item: wireItem(i) }),
    sdk: lowLevel(sdk),
    cached: lowLevel(cached),
    documents: (i) =>
      i % 2
        ? docs.send(new GetCommand({ TableName: 'bench', Key: { id: key(i) } }))
        : docs.send(new PutCommand({ TableName: 'bench', Item: item(i) })),
  };
  const n = Number(values.calls);
  for (const call of Object.values(variants)) for (let i = 0; i < 1000; i++) await call(i);
  const results: Record<string, number[]> = {};
  for (let r = 0; r < Number(values.repeat); r++) {
    for (const [name, call] of Object.entries(variants)) {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < n; i++) await call(i);
      const cpu = process.cpuUsage(cpu0);
      results[name] = [...(results[name] ?? []), (cpu.user + cpu.system) / 1000 / n];
    }
  }
  for (const [name, xs] of Object.entries(results))
    console.log(`${name}: node CPU ms/call ${xs.map((x) => x.toFixed(3)).join(' / ')}`);
  raw.close();
  sdk.destroy();
  await ddb.stop();
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
