import http = require('node:http');

import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { installDynamoMeter, type Meter } from '../../lambda/dynamo-meter';

/**
 * The meter as a sandbox installs it, on both ways a function's DynamoDB
 * calls travel: the shared client's transport (`clientConfig`) and `node:http`
 * (any other client). A stand-in for DynamoDB Local answers on 127.0.0.1 and
 * records what reached it.
 */
const ROLE = 'arn:aws:sts::000000000000:assumed-role/ApiRole/ApiFunction';
const ORDERS = 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders';

const original = http.request;
let stand: http.Server;
let port: number;
const received: { target: string; body: Record<string, unknown>; signature: string }[] = [];
let meter: Meter;
const woken: string[][] = [];

beforeAll(async () => {
  stand = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target']);
      received.push({
        target,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        signature: String(req.headers.authorization).replace(/^.*Signature=/, ''),
      });
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      res.end(
        JSON.stringify(
          target.endsWith('GetItem')
            ? { Item: { id: { S: 'o1' } }, ConsumedCapacity: { TableName: 'Orders', CapacityUnits: 0.5 } }
            : {},
        ),
      );
    });
  });
  await new Promise<void>((resolve) => stand.listen(0, '127.0.0.1', resolve));
  port = (stand.address() as AddressInfo).port;
  meter = installDynamoMeter({
    port,
    partitionKeys: { Orders: 'id' },
    onWrite: (tables) => woken.push(tables),
    principal: {
      arn: ROLE,
      policies: [
        {
          name: 'Orders',
          document: {
            Statement: [
              { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem'], Resource: ORDERS },
            ],
          },
        },
      ],
    },
  });
});

afterAll(async () => {
  http.request = original;
  stand.closeAllConnections();
  await new Promise((resolve) => stand.close(resolve));
});

beforeEach(() => {
  received.length = 0;
  woken.length = 0;
  meter.setDynamoFaults([]);
  meter.take();
});

/** A client of the stand-in, carried by `carrier` (a request handler, and a signer or not). */
const clientOf = (carrier: object) =>
  new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ApiFunction', secretAccessKey: 'local' },
    maxAttempts: 1,
    ...carrier,
  });

/** Each way, and the signature DynamoDB Local sees from it: the transport's placeholder, or SigV4's. */
const clients: Record<string, () => DynamoDBClient> = {
  "the shared client's transport": () => clientOf(meter.clientConfig),
  'any other client, through node:http': () =>
    clientOf({ requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ keepAlive: false }) }) }),
};

const signatures: Record<string, RegExp> = {
  "the shared client's transport": /^0$/,
  'any other client, through node:http': /^[0-9a-f]{64}$/,
};

describe.each(Object.keys(clients))('%s', (name) => {
  let client: DynamoDBClient;
  beforeEach(() => {
    client = clients[name]!();
  });
  afterEach(() => client.destroy());

  test('a read is sent asking for its consumed capacity and counted with the units DynamoDB reports', async () => {
    const { Item } = await client.send(new GetItemCommand({ TableName: 'Orders', Key: { id: { S: 'o1' } } }));
    expect(Item).toEqual({ id: { S: 'o1' } });
    expect(received).toEqual([
      {
        target: 'DynamoDB_20120810.GetItem',
        body: expect.objectContaining({ ReturnConsumedCapacity: 'TOTAL' }),
        signature: expect.stringMatching(signatures[name]!),
      },
    ]);
    expect(meter.take()).toEqual({ writes: [], reads: [['GetItem', 'Orders', 0.5]] });
  });

  test("a write is counted by item and wakes its table's pollers", async () => {
    await client.send(new PutItemCommand({ TableName: 'Orders', Item: { id: { S: 'o2' }, n: { N: '1' } } }));
    const batch = meter.take();
    expect(batch?.writes).toEqual([['PutItem', expect.any(Number), 'Orders', 'o2', 1, 0]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toEqual([['Orders']]);
  });

  test("a call the role does not allow is refused with IAM's message and never sent", async () => {
    await expect(
      client.send(new PutItemCommand({ TableName: 'Accounts', Item: { id: { S: 'c1' } } })),
    ).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`${ROLE} is not authorized to perform: dynamodb:PutItem`),
    });
    expect(received).toHaveLength(0);
    expect(meter.take()).toBeUndefined();
  });

  test("a fault rule's refusal is DynamoDB's own answer, and the call is never sent", async () => {
    meter.setDynamoFaults([{ error: 'ThrottlingException', rate: 1 }]);
    await expect(
      client.send(new GetItemCommand({ TableName: 'Orders', Key: { id: { S: 'o1' } } })),
    ).rejects.toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    expect(received).toHaveLength(0);
  });
});
