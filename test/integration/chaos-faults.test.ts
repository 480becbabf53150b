import {
  DynamoDBClient,
  ListTablesCommand,
  ProvisionedThroughputExceededException,
  QueryCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { DynamoDbDocuments } from '../../functions/shared/dynamodb-documents';
import { appendAtomically } from '../../functions/shared/dynamodb-event-store';
import { ConcurrencyError } from '../../functions/shared/errors';
import { DeadlineRetries, RETRY_MARGIN_MS, retryWithin } from '../../functions/shared/retries';
import {
  awsEndpoint,
  createCustomer,
  createProduct,
  eventually,
  get,
  invokeFunction,
  localAdmin,
  placeAndSettle,
  post,
  quiescentWrites,
} from '../support/api';

/**
 * The fault kinds `npm run chaos` injects besides the saga steps' own
 * (local/lambda/dynamo-faults.ts, local/duplicates.ts): a refused DynamoDB
 * call reaches the SDK as AWS's error, and duplicate delivery really
 * delivers twice while the consumers stay idempotent.
 */

const admin = async (path: string, body: unknown) => {
  const response = await fetch(`${awsEndpoint()}/_local/${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST /_local/${path}: ${response.status} ${await response.text()}`);
  return response.json();
};

afterEach(async () => {
  await admin('faults/dynamodb', []);
  await admin('faults/duplicates', {});
  await admin('faults/eventbridge', {});
  await admin('faults/deliveries', {});
});

describe('DynamoDB refusing calls', () => {
  // Faults are injected into the functions' calls: this client signs as the accounts API function
  // (the AWS endpoint knows a caller by its access key), within that function's role.
  let accountsFunction: string;
  let dynamo: DynamoDBClient;
  let table: string;
  const setDynamoFaults = (rules: unknown[]) => admin('faults/dynamodb', rules);
  beforeAll(async () => {
    const wiring = (await (await fetch(`${awsEndpoint()}/_local/wiring`)).json()) as { functions: string[] };
    accountsFunction = wiring.functions.find((f) => /^AccountsApi/.test(f))!;
    expect(accountsFunction).toBeDefined();
    dynamo = new DynamoDBClient({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: accountsFunction, secretAccessKey: 'local' },
      maxAttempts: 3,
    });
    // Listing tables is not in the function's role: the suite's own client (the account's administrator) lists.
    const administrator = new DynamoDBClient({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const { TableNames = [] } = await administrator.send(new ListTablesCommand({}));
    administrator.destroy();
    table = TableNames.find((t) => t.startsWith('AccountsEvents'))!;
    expect(table).toBeDefined();
  });
  afterAll(() => {
    dynamo.destroy();
  });
  const query = (client = dynamo) =>
    client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'aggregateId = :id',
        ExpressionAttributeValues: { ':id': { S: 'cus_nobody' } },
      }),
    );

  test('a throttled call is AWS’s error to the SDK, which retries it as a throttling error', async () => {
    await setDynamoFaults([{ error: 'ProvisionedThroughputExceededException', rate: 1 }]);
    const error = await query().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProvisionedThroughputExceededException);
    const e = error as ProvisionedThroughputExceededException;
    expect(e.$metadata.httpStatusCode).toBe(400);
    expect(e.$metadata.attempts).toBe(3);
    expect(e.message).toMatch(/provisioned throughput for the table was exceeded/);

    await setDynamoFaults([{ error: 'ThrottlingException', rate: 1 }]);
    const throttled = (await query().catch((x: unknown) => x)) as {
      name: string;
      $metadata: { attempts: number };
    };
    expect(throttled.name).toBe('ThrottlingException');
    expect(throttled.$metadata.attempts).toBe(3);

    // The functions' client (DeadlineRetries) gives up sooner, with half a second left of the invocation
    // past the margin; the caller still gets DynamoDB's own throttling error, not the strategy's.
    const functionsClient = new DynamoDBClient({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: accountsFunction, secretAccessKey: 'local' },
      retryStrategy: new DeadlineRetries(5),
    });
    retryWithin({ getRemainingTimeInMillis: () => RETRY_MARGIN_MS + 500 });
    const started = Date.now();
    const bounded = (await query(functionsClient)
      .catch((x: unknown) => x)
      .finally(() => {
        retryWithin(undefined);
        functionsClient.destroy();
      })) as { name: string; $metadata: { attempts: number } };
    expect(bounded.name).toBe('ThrottlingException');
    expect(bounded.$metadata.attempts).toBeLessThan(5);
    expect(Date.now() - started).toBeLessThan(500 + 1_000);

    // Lifted: the same call reaches DynamoDB again.
    await setDynamoFaults([]);
    await expect(query()).resolves.toMatchObject({ Count: 0 });
  });

  test('a transaction conflict cancels the transaction with its reasons, which the SDK leaves to the caller', async () => {
    await setDynamoFaults([{ error: 'TransactionConflict', rate: 1 }]);
    const put = (id: string) => ({
      Put: {
        TableName: table,
        Item: { aggregateId: { S: id }, version: { N: '1' } },
        ConditionExpression: 'attribute_not_exists(aggregateId)',
      },
    });
    const error = await dynamo
      .send(new TransactWriteItemsCommand({ TransactItems: [put('cus_chaos_a'), put('cus_chaos_b')] }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    const e = error as TransactionCanceledException;
    expect(e.$metadata.attempts).toBe(1);
    expect(e.CancellationReasons?.map((r) => r.Code).sort()).toEqual(['None', 'TransactionConflict']);
    // The refused transaction never reached DynamoDB: nothing was written.
    await setDynamoFaults([]);
    const written = await dynamo.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'aggregateId = :id',
        ExpressionAttributeValues: { ':id': { S: 'cus_chaos_a' } },
      }),
    );
    expect(written.Count).toBe(0);
  });

  // Regression (found by `npm run chaos`, cell dynamodb-conflict-20: a reservation answered 500): a transaction
  // cancelled for a conflict on a new item was reported as that item existing, so a creating command took
  // itself for a repeat of an earlier request and, finding none, failed instead of retrying.
  test('a transaction conflict is a race to retry, not an item that exists', async () => {
    // The functions' client, with the accounts function's credentials: the faults are the functions' own.
    const documents = new DynamoDbDocuments({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: accountsFunction, secretAccessKey: 'local' },
      retryStrategy: new StandardRetryStrategy(3),
    });
    const run = Date.now().toString(36);
    const append = (id: string) => ({
      aggregateId: id,
      items: [
        {
          Put: {
            TableName: table,
            Item: { aggregateId: id, version: 1 },
            ConditionExpression: 'attribute_not_exists(aggregateId)',
          },
        },
      ],
    });
    const appends = [append(`cus_conflict_a_${run}`), append(`cus_conflict_b_${run}`)];
    await setDynamoFaults([{ error: 'TransactionConflict', rate: 1 }]);
    const conflict = await appendAtomically(documents, appends).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConcurrencyError);
    expect((conflict as ConcurrencyError).aggregateIds).toHaveLength(1);
    expect((conflict as ConcurrencyError).existing).toEqual([]);
    // A single write (a plain conditional put) meeting a transaction on its item is the same race.
    await setDynamoFaults([{ error: 'TransactionConflict', rate: 1, operations: ['PutItem'] }]);
    const single = await appendAtomically(documents, [appends[0]!]).catch((e: unknown) => e);
    expect(single).toBeInstanceOf(ConcurrencyError);
    expect((single as ConcurrencyError).existing).toEqual([]);
    await setDynamoFaults([]);
    await appendAtomically(documents, appends);
    // Written once, the same appends fail their conditions: those items do exist.
    const repeat = await appendAtomically(documents, appends).catch((e: unknown) => e);
    expect(repeat).toBeInstanceOf(ConcurrencyError);
    expect([...(repeat as ConcurrencyError).existing].sort()).toEqual(
      appends.map((a) => a.aggregateId).sort(),
    );
    documents.destroy();
  });

  test('set through the admin API, the functions’ own calls are refused, and served again once lifted', async () => {
    const customer = await createCustomer();
    await admin('faults/dynamodb', [
      { error: 'ThrottlingException', rate: 1, operations: ['Query', 'GetItem'] },
    ]);
    const refused = await get(`/customers/${customer.customerId}`);
    // Refused for capacity once the SDK's retries are spent: the contract's 429, to be sent again.
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toMatchObject({ error: { code: 'THROTTLED' } });
    // A saga step sees the refusal as AWS's throttling error, which it classifies as worth retrying.
    const step = await invokeFunction('SagaSteps', {
      action: 'capture',
      orderId: 'ord_chaos',
      customerId: customer.customerId,
      items: [{ productId: 'prd_x', quantity: 1, priceCents: 100 }],
      totalCents: 100,
      deadline: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(step.error).toBe('Unhandled');
    // Or, on a loaded machine, the SDK's backoff over its refused attempts outlasts the function's timeout.
    expect(['TransientError', 'Sandbox.Timedout']).toContain((step.body as { errorType: string }).errorType);
    await admin('faults/dynamodb', []);
    expect((await get(`/customers/${customer.customerId}`)).status).toBe(200);
  });
});

describe('a single write meeting a transaction on its item', () => {
  test('is answered 429 with Retry-After, having written nothing', async () => {
    const conflicts = [{ error: 'TransactionConflict', rate: 1, operations: ['PutItem'] }];
    const key = `conflict-${Date.now()}`;
    const body = { name: 'Conflicted', email: 'conflicted@example.com' };
    await admin('faults/dynamodb', conflicts);
    const refused = await post('/customers', body, { 'idempotency-key': key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toMatchObject({ error: { code: 'THROTTLED' } });
    // The refused request changed nothing: sent again with its key, it creates the customer now.
    await admin('faults/dynamodb', []);
    const again = await post<{ customerId: string; name: string }>('/customers', body, {
      'idempotency-key': key,
    });
    expect(again.status).toBe(201);
    expect(again.body.name).toBe('Conflicted');
  });
});

describe('duplicate delivery', () => {
  test('every stream batch and bus event is delivered twice, and the order still settles exactly once', async () => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 10 });
    await localAdmin('reset-stats');
    await admin('faults/duplicates', { streamRecords: 1, busEvents: 1 });
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 2 }]);
    expect(order.status).toBe('CONFIRMED');
    // Its sagas' stream records and events have all been delivered (twice) once the read models agree.
    const settled = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${product.productId}`),
      (r) => r.body.sold === 2,
    );
    expect(settled.body).toMatchObject({ available: 8, reserved: 0, sold: 2 });
    const credit = await eventually(
      () => get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`),
      (r) => r.body.availableCreditCents === 100_000 - 2_000,
    );
    expect(credit.body.availableCreditCents).toBe(98_000);
    // The outbox publishes OrderPlaced after the request's own saga may have ended: wait for the bus's two.
    const stats = await eventually(
      () =>
        localAdmin<{
          streams: Record<string, { duplicatedBatches: number }>;
          eventBridge: { duplicatedDeliveries: number };
          stepFunctions: { executions: number };
        }>('stats'),
      (s) => s.stepFunctions.executions >= 3,
      15_000,
    );
    expect(Object.values(stats.streams).reduce((n, s) => n + s.duplicatedBatches, 0)).toBeGreaterThan(0);
    expect(stats.eventBridge.duplicatedDeliveries).toBeGreaterThan(0);
    // The request's execution and the bus's, twice: three sagas for one order, one of which ran it.
    expect(stats.stepFunctions.executions).toBeGreaterThanOrEqual(3);
  });
});

describe('late duplicates', () => {
  test('every batch and event delivered again 1.5 s late, out of order: the order still settles exactly once', async () => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 10 });
    await localAdmin('reset-stats');
    await admin('faults/duplicates', { streamRecords: 1, busEvents: 1, lateMs: 1_500 });
    const first = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 2 }]);
    // A second order's records and events arrive before the first one's late copies.
    const second = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 1 }]);
    expect([first.status, second.status]).toEqual(['CONFIRMED', 'CONFIRMED']);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await quiescentWrites();
    const stats = await localAdmin<{
      streams: Record<string, { duplicatedBatches: number }>;
      eventBridge: { duplicatedDeliveries: number };
    }>('stats');
    expect(Object.values(stats.streams).reduce((n, s) => n + s.duplicatedBatches, 0)).toBeGreaterThan(0);
    expect(stats.eventBridge.duplicatedDeliveries).toBeGreaterThan(0);
    // The late copies went back in time nowhere: the view and the credit count each order once.
    const view = await get<{ available: number; reserved: number; sold: number }>(
      `/products/${product.productId}`,
    );
    expect(view.body).toMatchObject({ available: 7, reserved: 0, sold: 3 });
    const credit = await get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`);
    expect(credit.body.availableCreditCents).toBe(100_000 - 3_000);
  });
});

describe('EventBridge refusing PutEvents', () => {
  interface BusStats {
    eventBridge: { byType: Record<string, number>; refusedEntries: number; refusedCalls: number };
  }
  /**
   * Places an order under `faults` (set once its customer and product are made and their events put)
   * and waits until it is final and every event it caused has been put and delivered.
   */
  const settledOrder = async (faults: Record<string, unknown>) => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 10 });
    await quiescentWrites();
    await localAdmin('reset-stats');
    await admin('faults/eventbridge', faults);
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 1 }]);
    await quiescentWrites();
    return { order, stats: await localAdmin<BusStats>('stats') };
  };

  test('a partial failure: the refused entry alone is put again, and every event is on the bus once', async () => {
    // The first entry put is refused (FailedEntryCount 1, ErrorCode InternalFailure), once.
    const { order, stats } = await settledOrder({ entries: 1, count: 1 });
    expect(order.status).toBe('CONFIRMED');
    expect(stats.eventBridge.refusedEntries).toBe(1);
    expect(Object.keys(stats.eventBridge.byType).length).toBeGreaterThan(0);
    for (const [type, n] of Object.entries(stats.eventBridge.byType)) expect([type, n]).toEqual([type, 1]);
  });

  test('a total failure: the whole call throttled, retried by the SDK, every event on the bus once', async () => {
    const { order, stats } = await settledOrder({ calls: 1, count: 2 });
    expect(order.status).toBe('CONFIRMED');
    expect(stats.eventBridge.refusedCalls).toBe(2);
    for (const [type, n] of Object.entries(stats.eventBridge.byType)) expect([type, n]).toEqual([type, 1]);
  });

  test('the entries refused carry AWS’s per-entry error, and the call is answered 200', async () => {
    const client = new EventBridgeClient({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await admin('faults/eventbridge', { entries: 1, entryError: 'ThrottlingException', count: 1 });
    const entry = { Source: 'chaos.test', DetailType: 'Probe', Detail: '{}' };
    const answer = await client.send(new PutEventsCommand({ Entries: [entry, entry] }));
    client.destroy();
    expect(answer.FailedEntryCount).toBe(1);
    expect(answer.Entries?.[0]).toMatchObject({ ErrorCode: 'ThrottlingException' });
    expect(answer.Entries?.[1]?.EventId).toBeDefined();
  });
});

describe('dead letters, and the redrive', () => {
  type Queues = Record<string, { messageId: string; body: string }[]>;
  const letters = async () => (await (await fetch(`${awsEndpoint()}/_local/dead-letters`)).json()) as Queues;
  const count = (queues: Queues) => Object.values(queues).reduce((n, q) => n + q.length, 0);
  const redrive = () =>
    admin('dead-letters/redrive', undefined) as Promise<{ redriven: unknown[]; left: { reason: string }[] }>;

  test('a poison record ends in the projector’s on-failure destination; redriven, the view is exact', async () => {
    await redrive();
    expect(count(await letters())).toBe(0);
    const product = await createProduct({ stock: 5 });
    await quiescentWrites();
    // The next record of the inventory stream is poison: the projector fails on it every time.
    await admin('faults/deliveries', { poisonRecords: 1, poisonFunction: 'InventoryProjector' });
    const reserved = await post<{ reservationId: string }>(`/products/${product.productId}/reservations`, {
      quantity: 2,
    });
    expect(reserved.status).toBe(201);
    const queues = await eventually(letters, (q) => count(q) === 1, 30_000);
    const [queue, [letter]] = Object.entries(queues).find(([, q]) => q.length > 0)!;
    expect(queue).toMatch(/Projection/);
    expect(JSON.parse(letter!.body)).toMatchObject({
      DDBStreamBatchInfo: { batchSize: 1 },
      responseContext: { localLastError: expect.stringMatching(/^PoisonRecord/) },
    });
    // Still poisoned, the redrive fails and the letter stays.
    const refused = await redrive();
    expect(refused.left).toHaveLength(1);
    // Lifted: redriven, the letter is gone and the product's view counts the reservation.
    await admin('faults/deliveries', {});
    const done = await redrive();
    expect(done).toMatchObject({ redriven: [expect.anything()], left: [] });
    expect(count(await letters())).toBe(0);
    const view = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${product.productId}`),
      (r) => r.body.reserved === 2,
    );
    expect(view.body).toMatchObject({ available: 3, reserved: 2, sold: 0 });
  });

  test('a rule target failing every attempt ends in its dead-letter queue; redriven, it is delivered', async () => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 10 });
    await admin('faults/deliveries', { failingTargets: 1, failingRule: 'SagaStartOnOrderPlaced' });
    await localAdmin('reset-stats');
    // The request's own saga confirms the order; the bus's copy fails until its dead-letter queue.
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 1 }]);
    expect(order.status).toBe('CONFIRMED');
    const queues = await eventually(letters, (q) => count(q) >= 1, 45_000);
    const bodies = Object.values(queues).flatMap((q) =>
      q.map((m) => JSON.parse(m.body) as Record<string, unknown>),
    );
    expect(bodies.some((b) => String(b.error).startsWith('TargetFailing'))).toBe(true);
    await admin('faults/deliveries', {});
    const before = await localAdmin<{ stepFunctions: { executions: number } }>('stats');
    const done = await redrive();
    expect(done.left).toEqual([]);
    expect(count(await letters())).toBe(0);
    // Delivered: the saga started again with the event, found the order final, and changed nothing.
    const after = await localAdmin<{ stepFunctions: { executions: number } }>('stats');
    expect(after.stepFunctions.executions).toBeGreaterThan(before.stepFunctions.executions);
    const again = await get<{ status: string }>(`/orders/${order.orderId}`);
    expect(again.body.status).toBe('CONFIRMED');
    const credit = await get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`);
    expect(credit.body.availableCreditCents).toBe(99_000);
  });
});
