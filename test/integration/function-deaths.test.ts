import { randomUUID } from 'node:crypto';
import {
  createCustomer,
  createProduct,
  eventually,
  get,
  localAdmin,
  post,
  quiescentWrites,
  settledOrder,
} from '../support/api';
import { eventsOf, injectedSoFar, setLocalFaults } from '../support/event-log';

/**
 * A function that dies after its write and before its answer, or midway
 * through its work (local/lambda/function-deaths.ts: the sandbox killed, the
 * caller answered Lambda's `Runtime.ExitError`), on each way a caller tries
 * again with a new invocation: the saga Task's `Retry`, the API client's
 * resend with its `Idempotency-Key` (a 500 first), and the stream's
 * redelivery of the batch. Each test kills exactly one invocation (`count: 1`)
 * and checks that the retry found the first effect and did nothing twice,
 * and that the client got the answer it would have had.
 */

const dieOnce = (functionPrefix: string, when: 'after-work' | 'midway' = 'after-work') =>
  setLocalFaults('functions', [{ when, rate: 1, functions: [functionPrefix], count: 1 }]);
const deathsSoFar = async () => {
  const { functions } = await injectedSoFar();
  return functions.afterWork + functions.midway;
};
const taskRetries = async () =>
  (await localAdmin<{ stepFunctions: { taskRetries: number } }>('stats')).stepFunctions.taskRetries;

afterEach(async () => {
  await setLocalFaults('functions', []);
});

/** Each event type of `events` once and no more, and `expected` among them. */
const onceEach = (events: readonly { type: string }[], expected: readonly string[]) => {
  const types = events.map((e) => e.type);
  expect(new Set(types).size).toBe(types.length);
  expect(types).toEqual(expect.arrayContaining([...expected]));
};

/** The order's captures and refunds in its customer's account. */
async function paymentsOf(customerId: string, orderId: string) {
  const account = (await eventsOf(/^Accounts.*Events/, customerId)).filter((e) => e.data.orderId === orderId);
  return {
    captured: account.filter((e) => e.type === 'CreditCaptured').length,
    refunded: account.filter((e) => e.type === 'CreditRefunded').length,
  };
}

describe('a saga step that dies: the Task retries it', () => {
  test.each(['after-work', 'midway'] as const)(
    '%s: the order confirmed once, one capture of its total, the stock sold once',
    async (when) => {
      const customer = await createCustomer({ creditLimitCents: 100_000 });
      const product = await createProduct({ priceCents: 1_000, stock: 10 });
      const [deaths, retries] = [await deathsSoFar(), await taskRetries()];
      await dieOnce('SagaSteps', when);
      const placed = await post<{ orderId: string }>('/orders', {
        customerId: customer.customerId,
        items: [{ productId: product.productId, quantity: 3 }],
      });
      expect(placed.status).toBe(202);
      const order = await settledOrder(placed.body.orderId);
      expect(order.body).toMatchObject({ status: 'CONFIRMED', totalCents: 3_000 });
      await quiescentWrites();
      expect((await deathsSoFar()) - deaths).toBe(1);
      expect((await taskRetries()) - retries).toBeGreaterThanOrEqual(1);
      onceEach(await eventsOf(/^Orders.*Events/, placed.body.orderId), ['OrderPlaced', 'OrderConfirmed']);
      expect(await paymentsOf(customer.customerId, placed.body.orderId)).toEqual({
        captured: 1,
        refunded: 0,
      });
      const credit = await get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`);
      expect(credit.body.availableCreditCents).toBe(97_000);
      const stock = await eventually(
        () => get<{ available: number; reserved: number; sold: number }>(`/products/${product.productId}`),
        (r) => r.body.sold === 3,
      );
      expect(stock.body).toMatchObject({ available: 7, reserved: 0, sold: 3 });
    },
    60_000,
  );
});

describe('an API function that dies: its client resends with the same key', () => {
  test.each(['after-work', 'midway'] as const)(
    '%s: POST /orders answers 500, then 202 with one order, confirmed once',
    async (when) => {
      const customer = await createCustomer({ creditLimitCents: 100_000 });
      const product = await createProduct({ priceCents: 500, stock: 10 });
      const body = {
        customerId: customer.customerId,
        items: [{ productId: product.productId, quantity: 2 }],
      };
      const key = { 'idempotency-key': `die-${randomUUID()}` };
      await dieOnce('OrdersApi', when);
      const first = await post('/orders', body, key);
      expect(first).toMatchObject({ status: 500, body: { message: 'Internal Server Error' } });
      const again = await post<{ orderId: string; status: string }>('/orders', body, key);
      expect(again.status).toBe(202);
      // And the same answer to every later repeat: one order, whatever the first attempt had written.
      const repeat = await post<{ orderId: string }>('/orders', body, key);
      expect(repeat.status).toBe(202);
      expect(repeat.body.orderId).toBe(again.body.orderId);
      const order = await settledOrder(again.body.orderId);
      expect(order.body).toMatchObject({ status: 'CONFIRMED', totalCents: 1_000 });
      await quiescentWrites();
      onceEach(await eventsOf(/^Orders.*Events/, again.body.orderId), ['OrderPlaced', 'OrderConfirmed']);
      expect(await paymentsOf(customer.customerId, again.body.orderId)).toEqual({ captured: 1, refunded: 0 });
    },
    60_000,
  );

  test.each(['after-work', 'midway'] as const)(
    '%s: a reservation answers 500, then 201 with one reservation holding its stock once',
    async (when) => {
      const product = await createProduct({ stock: 5 });
      const key = { 'idempotency-key': `die-${randomUUID()}` };
      const path = `/products/${product.productId}/reservations`;
      await dieOnce('InventoryApi', when);
      const first = await post(path, { quantity: 2 }, key);
      expect(first.status).toBe(500);
      const again = await post<{ reservationId: string; quantity: number }>(path, { quantity: 2 }, key);
      expect(again.status).toBe(201);
      expect(again.body.quantity).toBe(2);
      const events = await eventsOf(/^Inventory.*Events/, again.body.reservationId);
      expect(events.map((e) => e.type)).toEqual(['ReservationPlaced']);
      const stock = await eventually(
        () => get<{ available: number; reserved: number }>(`/products/${product.productId}`),
        (r) => r.body.reserved === 2,
      );
      expect(stock.body).toMatchObject({ available: 3, reserved: 2, sold: 0 });
    },
  );

  test('after-work: POST /products answers 500, then 201 with one product', async () => {
    const key = { 'idempotency-key': `die-${randomUUID()}` };
    const body = { sku: `DIE-${randomUUID().slice(0, 8)}`, name: 'Dies once', priceCents: 700, stock: 4 };
    await dieOnce('InventoryApi');
    expect((await post('/products', body, key)).status).toBe(500);
    const again = await post<{ productId: string; available: number }>('/products', body, key);
    expect(again.status).toBe(201);
    expect(again.body.available).toBe(4);
    expect((await eventsOf(/^Inventory.*Events/, again.body.productId)).map((e) => e.type)).toEqual([
      'ProductCreated',
    ]);
  });
});

describe('a stream consumer that dies: the mapping delivers the batch again', () => {
  test('the projector: the product view counts the reservation once', async () => {
    const product = await createProduct({ stock: 6 });
    await quiescentWrites();
    const deaths = await deathsSoFar();
    await dieOnce('InventoryProjector');
    const reserved = await post(`/products/${product.productId}/reservations`, { quantity: 4 });
    expect(reserved.status).toBe(201);
    await quiescentWrites();
    expect((await deathsSoFar()) - deaths).toBe(1);
    const stock = await get<{ available: number; reserved: number; sold: number }>(
      `/products/${product.productId}`,
    );
    expect(stock.body).toMatchObject({ available: 2, reserved: 4, sold: 0 });
  });

  test('the outbox publisher: the order placed is published again, and its saga runs once', async () => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 5 });
    const deaths = await deathsSoFar();
    await dieOnce('OutboxPublisher');
    const placed = await post<{ orderId: string }>('/orders', {
      customerId: customer.customerId,
      items: [{ productId: product.productId, quantity: 1 }],
    });
    expect((await settledOrder(placed.body.orderId)).body.status).toBe('CONFIRMED');
    await quiescentWrites();
    expect((await deathsSoFar()) - deaths).toBe(1);
    onceEach(await eventsOf(/^Orders.*Events/, placed.body.orderId), ['OrderPlaced', 'OrderConfirmed']);
    expect(await paymentsOf(customer.customerId, placed.body.orderId)).toEqual({ captured: 1, refunded: 0 });
    const stock = await eventually(
      () => get<{ sold: number }>(`/products/${product.productId}`),
      (r) => r.body.sold === 1,
    );
    expect(stock.body).toMatchObject({ available: 4, reserved: 0, sold: 1 });
  });
});
