import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type LocalDynamoDb, startDynamoDb } from '@commerce/local-cloud';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { DynamoDbDocuments, DynamoDbError, isDynamoDbError } from '../../functions/shared/dynamodb-documents';

/**
 * The functions' DynamoDB client (functions/shared/dynamodb-documents.ts)
 * against the local engine: every operation the functions use, round trip,
 * and DynamoDB's refusals as the SDK raised them (name, status, fields). Then
 * its retries against a server that answers as DynamoDB does under pressure.
 */
const TABLE = 'documents';
/** No backoff to wait for: whether a call is retried is what is tested here. */
const retries = (maxAttempts = 3) =>
  new StandardRetryStrategy({
    maxAttempts,
    backoff: { computeNextBackoffDelay: () => 1, setDelayBase: () => undefined },
  });
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

let ddb: LocalDynamoDb;
let client: DynamoDbDocuments;
beforeAll(async () => {
  ddb = await startDynamoDb();
  const admin = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1', credentials });
  await admin.send(
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
  admin.destroy();
  client = new DynamoDbDocuments({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials,
    retryStrategy: retries(),
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
});
afterAll(async () => {
  client?.destroy();
  await ddb?.stop();
});

describe('the functions’ DynamoDB client, on the local engine', () => {
  const item = {
    id: 'a',
    v: 1,
    name: 'Ada',
    total: 12.5,
    lines: [{ sku: 'x', qty: 2 }],
    tags: new Set(['t']),
    gone: undefined,
  };

  test('puts, gets, updates and deletes plain values', async () => {
    await client.put({ TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(id)' });
    const { gone: _, ...stored } = item;
    expect(
      (await client.get({ TableName: TABLE, Key: { id: 'a', v: 1 }, ConsistentRead: true })).Item,
    ).toEqual(stored);
    const updated = await client.update({
      TableName: TABLE,
      Key: { id: 'a', v: 1 },
      UpdateExpression: 'SET #n = :n ADD #t :d',
      ExpressionAttributeNames: { '#n': 'name', '#t': 'total' },
      ExpressionAttributeValues: { ':n': 'Grace', ':d': 1 },
      ReturnValues: 'ALL_NEW',
    });
    expect(updated.Attributes).toEqual({ ...stored, name: 'Grace', total: 13.5 });
    await client.delete({ TableName: TABLE, Key: { id: 'a', v: 1 } });
    expect((await client.get({ TableName: TABLE, Key: { id: 'a', v: 1 } })).Item).toBeUndefined();
  });

  test('a failed condition is ConditionalCheckFailedException, with the item as stored when asked', async () => {
    await client.put({ TableName: TABLE, Item: { id: 'c', v: 1, n: 7 } });
    const error = await client
      .put({
        TableName: TABLE,
        Item: { id: 'c', v: 1, n: 8 },
        ConditionExpression: 'attribute_not_exists(id)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      })
      .catch((e: unknown) => e);
    expect(isDynamoDbError(error, 'ConditionalCheckFailedException')).toBe(true);
    expect(error).toMatchObject({
      $fault: 'client',
      $metadata: { httpStatusCode: 400, attempts: 1 },
      Item: { id: { S: 'c' }, v: { N: '1' }, n: { N: '7' } },
    });
  });

  test('a cancelled transaction writes nothing and gives a reason per action', async () => {
    const error = await client
      .transactWrite({
        TransactItems: [
          { Put: { TableName: TABLE, Item: { id: 't', v: 1 } } },
          {
            Put: {
              TableName: TABLE,
              Item: { id: 'c', v: 1 },
              ConditionExpression: 'attribute_not_exists(id)',
            },
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(isDynamoDbError(error, 'TransactionCanceledException')).toBe(true);
    expect((error as DynamoDbError).CancellationReasons?.map((r) => r.Code)).toEqual([
      'None',
      'ConditionalCheckFailed',
    ]);
    expect((await client.get({ TableName: TABLE, Key: { id: 't', v: 1 } })).Item).toBeUndefined();
    await client.transactWrite({
      TransactItems: [
        { Put: { TableName: TABLE, Item: { id: 't', v: 1 } } },
        {
          Update: {
            TableName: TABLE,
            Key: { id: 'u', v: 1 },
            UpdateExpression: 'ADD n :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
        {
          ConditionCheck: {
            TableName: TABLE,
            Key: { id: 'c', v: 1 },
            ConditionExpression: 'attribute_exists(id)',
          },
        },
      ],
    });
    expect((await client.get({ TableName: TABLE, Key: { id: 'u', v: 1 } })).Item).toEqual({
      id: 'u',
      v: 1,
      n: 1,
    });
    expect((await client.get({ TableName: TABLE, Key: { id: 't', v: 1 } })).Item).toEqual({ id: 't', v: 1 });
  });

  test('queries page by page, newest first when asked, and batch gets', async () => {
    for (let v = 1; v <= 5; v++) await client.put({ TableName: TABLE, Item: { id: 'q', v } });
    const seen: number[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await client.query({
        TableName: TABLE,
        KeyConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': 'q' },
        ScanIndexForward: false,
        Limit: 2,
        ExclusiveStartKey: startKey,
      });
      seen.push(...(page.Items ?? []).map((i) => i.v as number));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
    const { Responses, UnprocessedKeys } = await client.batchGet({
      RequestItems: {
        [TABLE]: {
          Keys: [
            { id: 'q', v: 2 },
            { id: 'q', v: 9 },
            { id: 'c', v: 1 },
          ],
        },
      },
    });
    expect(Responses?.[TABLE]?.map((i) => `${i.id}${i.v}`).sort()).toEqual(['c1', 'q2']);
    expect(UnprocessedKeys).toEqual({});
  });

  test('marshals as before once the SDK’s document client has been given the same options', async () => {
    // The SDK's document client sets `convertTopLevelContainer` on the options object it is given.
    const shared = { removeUndefinedValues: true };
    const admin = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1', credentials });
    const sdk = DynamoDBDocumentClient.from(admin, { marshallOptions: shared });
    const ours = new DynamoDbDocuments({
      endpoint: ddb.endpoint,
      region: 'us-east-1',
      credentials,
      retryStrategy: retries(),
      marshallOptions: shared,
    });
    await sdk.send(new PutCommand({ TableName: TABLE, Item: { id: 's', v: 1 } }));
    await ours.put({ TableName: TABLE, Item: { id: 's', v: 2 } });
    const { Items } = await ours.query({
      TableName: TABLE,
      KeyConditionExpression: 'id = :id',
      ExpressionAttributeValues: { ':id': 's' },
    });
    expect(Items).toEqual([
      { id: 's', v: 1 },
      { id: 's', v: 2 },
    ]);
    admin.destroy();
    ours.destroy();
  });

  test('a request DynamoDB rejects is ValidationException, not retried', async () => {
    const error = await client
      .query({
        TableName: TABLE,
        KeyConditionExpression: 'id = = :id',
        ExpressionAttributeValues: { ':id': 'q' },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DynamoDbError);
    expect(error).toMatchObject({
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400, attempts: 1 },
    });
  });
});

describe('the functions’ DynamoDB client, retrying as the SDK does', () => {
  /** A server answering each request with the next of `answers` (then 200 `{}`), and what it was sent. */
  async function scripted(
    answers: ((req: IncomingMessage, end: (status: number, body: object) => void) => void)[],
    maxAttempts = 3,
  ) {
    const requests: { target: string; authorization: string }[] = [];
    const server: Server = createServer((req, res) => {
      requests.push({
        target: String(req.headers['x-amz-target']),
        authorization: String(req.headers.authorization),
      });
      req.resume();
      req.on('end', () => {
        const answer = answers.shift() ?? ((_, end) => end(200, {}));
        answer(req, (status, body) =>
          res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body)),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const scriptedClient = new DynamoDbDocuments({
      endpoint,
      region: 'us-east-1',
      credentials,
      retryStrategy: retries(maxAttempts),
    });
    return {
      client: scriptedClient,
      requests,
      close: () => {
        scriptedClient.destroy();
        server.close();
      },
    };
  }
  const refusal = (type: string) => (_: IncomingMessage, end: (status: number, body: object) => void) =>
    end(400, { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: type });

  test('throttling, a server error and a reset connection are retried; the call then succeeds', async () => {
    const answers = [
      refusal('ProvisionedThroughputExceededException'),
      (_: IncomingMessage, end: (status: number, body: object) => void) =>
        end(500, { __type: 'com.amazon.coral.service#InternalServerError', message: 'oops' }),
      (req: IncomingMessage) => req.socket.destroy(),
    ];
    const server = await scripted([...answers], 4);
    await server.client.put({ TableName: TABLE, Item: { id: 'r', v: 1 } });
    expect(server.requests.map((r) => r.target)).toEqual(Array(4).fill('DynamoDB_20120810.PutItem'));
    expect(server.requests[0]!.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/us-east-1\/dynamodb\/aws4_request, /,
    );
    server.close();
    // With one attempt fewer, the last refusal is thrown, with the attempts made.
    const short = await scripted([...answers], 3);
    const error = await short.client
      .put({ TableName: TABLE, Item: { id: 'r', v: 1 } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ECONNRESET', $metadata: { attempts: 3 } });
    short.close();
  });

  test('a throttled call that succeeds on its retry answers, and a client error is thrown at once', async () => {
    const server = await scripted([
      refusal('ThrottlingException'),
      (_, end) => end(200, { Item: { id: { S: 'x' } } }),
      refusal('ResourceNotFoundException'),
    ]);
    expect((await server.client.get({ TableName: TABLE, Key: { id: 'x' } })).Item).toEqual({ id: 'x' });
    const error = await server.client.get({ TableName: TABLE, Key: { id: 'x' } }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 400, attempts: 1 },
    });
    expect(server.requests).toHaveLength(3);
    server.close();
  });
});
