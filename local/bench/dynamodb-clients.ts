import { Agent } from 'node:http';
import { arch, cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import {
  DynamoDBClient,
  type DynamoDBClientConfig,
  PutItemCommand,
  QueryCommand as QueryItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { processCpuMs } from '../cpu';
import { DynamoJsonClient } from '../dynamo-client';
import { startDynamoDbLocal } from '../dynamodb';
import { dynamoTransport } from '../lambda/dynamo-transport';

/**
 * What one DynamoDB call costs the caller's CPU and DynamoDB Local's, by
 * client: the functions' document client (as functions/shared/aws.ts makes
 * it on Lambda), the SDK's low-level client, the functions' client with a
 * fixed `authorization` header instead of SigV4 signing, the functions'
 * client as the local cloud's sandboxes make it (local/lambda/dynamo-transport.ts),
 * and plain JSON over `node:http` (local/dynamo-client.ts). Each round makes `--calls` sequential
 * calls per client, half a conditional `PutItem` of an order-sized event
 * item, half a consistent `Query … Limit 1`, after a warm-up; the caller's
 * CPU from `process.cpuUsage`, the JVM's from /proc.
 *
 *   npx tsx local/bench/dynamodb-clients.ts --calls 3000 --rounds 3
 */
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '3' },
  },
});
const TABLE = 'bench';
const FIXED_AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0';

/** The JVM's CPU time, ms (NaN where /proc cannot be read). */
const jvmCpuMs = (pid: number) => processCpuMs(pid) ?? Number.NaN;

/** An event item of the size and shape of an order's `OrderPlaced`, with the state it carries. */
const eventItem = (n: number) => {
  const items = [
    { productId: 'prd_1', quantity: 2, priceCents: 500 },
    { productId: 'prd_2', quantity: 1, priceCents: 900 },
  ];
  const now = new Date().toISOString();
  return {
    aggregateId: `ord_${n}`,
    version: 1,
    aggregateType: 'Order',
    type: 'OrderPlaced',
    schemaVersion: 1,
    data: { orderId: `ord_${n}`, customerId: 'cus_1', items, totalCents: 1900, placedAt: now, deadline: now },
    eventId: crypto.randomUUID(),
    occurredAt: now,
    correlationId: crypto.randomUUID(),
    state: {
      orderId: `ord_${n}`,
      status: 'PENDING',
      items,
      totalCents: 1900,
      createdAt: now,
      updatedAt: now,
    },
    foldVersion: 1,
  };
};
const newestQuery = (aggregateId: unknown) => ({
  TableName: TABLE,
  KeyConditionExpression: '#id = :id',
  ExpressionAttributeNames: { '#id': 'aggregateId' },
  ExpressionAttributeValues: { ':id': aggregateId },
  ScanIndexForward: false,
  Limit: 1,
  ConsistentRead: true,
});
const firstPut = (item: Record<string, unknown>) => ({
  TableName: TABLE,
  Item: item,
  ConditionExpression: 'attribute_not_exists(#id)',
  ExpressionAttributeNames: { '#id': 'aggregateId' },
});

async function main() {
  const ddb = await startDynamoDbLocal({});
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  process.env.AWS_REGION ??= 'us-east-1';
  const json = new DynamoJsonClient(ddb.port);
  try {
    await json.call('DynamoDB_20120810.CreateTable', {
      TableName: TABLE,
      AttributeDefinitions: [
        { AttributeName: 'aggregateId', AttributeType: 'S' },
        { AttributeName: 'version', AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'aggregateId', KeyType: 'HASH' },
        { AttributeName: 'version', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    });
    const sdkClient = (signer?: DynamoDBClientConfig['signer']) =>
      new DynamoDBClient({
        endpoint: ddb.endpoint,
        requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 512 }) }),
        ...(signer ? { signer } : {}),
      });
    const documentsOf = (client: DynamoDBClient) =>
      DynamoDBDocumentClient.from(client, {
        marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
      });
    const documents = documentsOf(sdkClient());
    const lowLevel = sdkClient();
    const unsigned = documentsOf(
      sdkClient({
        sign: async (request) => {
          request.headers.authorization = FIXED_AUTHORIZATION;
          return request;
        },
      }),
    );
    // The sandbox's transport as functions/shared/aws.ts takes it, with a meter that passes every call.
    const transport = dynamoTransport({ port: ddb.port, call: () => undefined });
    const throughTransport = documentsOf(
      new DynamoDBClient({ endpoint: ddb.endpoint, ...(transport as Partial<DynamoDBClientConfig>) }),
    );
    let written = 0;
    const key = (i: number) => `ord_${i % 500}`;
    /** Half queries, half puts, through a document client (the functions' kind). */
    const throughDocuments = (client: DynamoDBDocumentClient) => (i: number) =>
      i % 2
        ? client.send(new QueryCommand(newestQuery(key(i))))
        : client.send(new PutCommand(firstPut(eventItem(++written))));
    const clients: Record<string, (i: number) => Promise<unknown>> = {
      'document client (the functions)': throughDocuments(documents),
      'low-level client, marshalled by hand': (i) =>
        i % 2
          ? lowLevel.send(new QueryItemsCommand(newestQuery({ S: key(i) }) as never))
          : lowLevel.send(new PutItemCommand(firstPut(marshall(eventItem(++written))) as never)),
      'document client, no signing': throughDocuments(unsigned),
      "document client, the sandbox's transport": throughDocuments(throughTransport),
      'plain JSON over node:http': (i) =>
        i % 2
          ? json.call('DynamoDB_20120810.Query', newestQuery({ S: key(i) }))
          : json.call('DynamoDB_20120810.PutItem', firstPut(marshall(eventItem(++written)))),
    };
    console.log(
      `${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${arch()}, Node.js ${process.version}`,
    );
    for (const call of Object.values(clients)) for (let i = 0; i < Number(values.warmup); i++) await call(i);
    const calls = Number(values.calls);
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const [name, call] of Object.entries(clients)) {
        const cpu = process.cpuUsage();
        const jvm = jvmCpuMs(ddb.pid);
        for (let i = 0; i < calls; i++) await call(i);
        const { user, system } = process.cpuUsage(cpu);
        console.log(
          `round ${round}, ${name}: client ${((user + system) / 1000 / calls).toFixed(3)} ms CPU/call, ` +
            `DynamoDB Local ${((jvmCpuMs(ddb.pid) - jvm) / calls).toFixed(3)} ms CPU/call`,
        );
      }
    }
  } finally {
    json.close();
    await ddb.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
