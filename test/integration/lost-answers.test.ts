import {
  createCustomer,
  createProduct,
  del,
  eventually,
  get,
  placeAndSettle,
  post,
  quiescentWrites,
  setFaults,
} from '../support/api';
import { eventsOf, injectedSoFar, setLocalFaults } from '../support/event-log';

/**
 * A DynamoDB write that commits but whose answer is lost (a 500
 * InternalServerError or a reset connection after the commit: the
 * lost-answer fault of local/lambda/dynamo-faults.ts), on every write path:
 * the API's commands, the saga's steps and its compensation (a release and
 * a refund), the projector. (The sweepers' writes: short-timings.test.ts.)
 * Each test loses the first answer of every write the functions make (rate
 * 1, `once`: the SDK's retry of the same call is answered), so every write
 * is made, then retried; each checks that the retry found the first effect
 * and did nothing twice, and that the client got the answer it would have
 * had. (The outbox writes nothing to DynamoDB: it publishes what the stream
 * delivers, and a write whose answer is lost is delivered once, as any.)
 */

const loseEveryFirstAnswer = (way?: 'InternalServerError' | 'ConnectionReset') =>
  setLocalFaults('dynamodb', [{ kind: 'lost-answer', rate: 1, once: true, ...(way ? { way } : {}) }]);
const lostSoFar = async () => (await injectedSoFar()).dynamodb.lostAnswers;

afterEach(async () => {
  await setLocalFaults('dynamodb', []);
  await setFaults([]);
});

describe('a write that commits and loses its answer', () => {
  test.each(['InternalServerError', 'ConnectionReset'] as const)(
    'customers (%s): registering answers 201 once, with and without a key, and registers one customer',
    async (way) => {
      const before = await lostSoFar();
      await loseEveryFirstAnswer(way);
      const body = { name: 'Lost Answer', email: 'lost@example.com', creditLimitCents: 5_000 };
      const plain = await post<{ customerId: string; availableCreditCents: number }>('/customers', body);
      expect(plain.status).toBe(201);
      expect(plain.body).toMatchObject({ name: 'Lost Answer', availableCreditCents: 5_000 });
      const key = `lost-${way}-${Date.now()}`;
      const keyed = await post<{ customerId: string }>('/customers', body, { 'idempotency-key': key });
      expect(keyed.status).toBe(201);
      // The client's own retry of the keyed request is answered the first answer.
      const again = await post<{ customerId: string }>('/customers', body, { 'idempotency-key': key });
      expect(again).toMatchObject({ status: 201, body: keyed.body });
      expect(await lostSoFar()).toBeGreaterThanOrEqual(before + 2);
      for (const id of [plain.body.customerId, keyed.body.customerId]) {
        const events = await eventsOf(/^Accounts.*Events/, id);
        expect(events.map((e) => e.type)).toEqual(['CustomerRegistered']);
      }
    },
  );

  test('reservations: placing answers 201, releasing 200 RELEASED, each one event, and the stock comes back', async () => {
    const { productId } = await createProduct({ stock: 5 });
    const before = await lostSoFar();
    await loseEveryFirstAnswer();
    const placed = await post<{ reservationId: string; quantity: number }>(
      `/products/${productId}/reservations`,
      { quantity: 2 },
    );
    expect(placed.status).toBe(201);
    expect(placed.body.quantity).toBe(2);
    const path = `/products/${productId}/reservations/${placed.body.reservationId}`;
    const released = await del(path);
    expect(released).toMatchObject({
      status: 200,
      body: { reservationId: placed.body.reservationId, status: 'RELEASED' },
    });
    expect(await lostSoFar()).toBeGreaterThanOrEqual(before + 2);
    const events = await eventsOf(/^Inventory.*Events/, placed.body.reservationId);
    expect(events.map((e) => e.type)).toEqual(['ReservationPlaced', 'ReservationReleased']);
    // The projector's writes lose their first answers too, and the view still counts each change once.
    const product = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${productId}`),
      (r) => r.body.reserved === 0 && r.body.available === 5,
    );
    expect(product.body).toMatchObject({ available: 5, reserved: 0, sold: 0 });
  });

  test('restocking (an idempotent command): answers 200 with the stock added once, with and without a key', async () => {
    const { productId } = await createProduct({ stock: 5 });
    await loseEveryFirstAnswer();
    const plain = await post<{ available: number }>(`/products/${productId}/restock`, { quantity: 2 });
    expect(plain.status).toBe(200);
    expect(plain.body.available).toBe(7);
    const key = `restock-${Date.now()}`;
    const keyed = await post<{ available: number }>(
      `/products/${productId}/restock`,
      { quantity: 3 },
      { 'idempotency-key': key },
    );
    expect(keyed.status).toBe(200);
    expect(keyed.body.available).toBe(10);
    const again = await post(`/products/${productId}/restock`, { quantity: 3 }, { 'idempotency-key': key });
    expect(again).toMatchObject({ status: 200, body: keyed.body });
    const product = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${productId}`),
      (r) => r.body.available === 10,
    );
    expect(product.body).toMatchObject({ available: 10, reserved: 0, sold: 0 });
    const restocks = (await eventsOf(/^Inventory.*Events/, productId)).filter(
      (e) => e.type === 'ProductRestocked',
    );
    expect(restocks).toHaveLength(2);
  });

  test('products: creating answers 201 once, with and without a key, and creates one product', async () => {
    await loseEveryFirstAnswer();
    const body = (sku: string) => ({ sku, name: 'Lost Answer', priceCents: 900, stock: 3 });
    const plain = await post<{ productId: string; available: number }>('/products', body(`LA-${Date.now()}`));
    expect(plain.status).toBe(201);
    expect(plain.body.available).toBe(3);
    const key = `product-${Date.now()}`;
    const keyedBody = body(`LA-K-${Date.now()}`);
    const keyed = await post<{ productId: string }>('/products', keyedBody, { 'idempotency-key': key });
    expect(keyed.status).toBe(201);
    const again = await post('/products', keyedBody, { 'idempotency-key': key });
    expect(again).toMatchObject({ status: 201, body: keyed.body });
    for (const id of [plain.body.productId, keyed.body.productId]) {
      const events = await eventsOf(/^Inventory.*Events/, id);
      expect(events.map((e) => e.type)).toEqual(['ProductCreated']);
    }
  });

  test('refunds: an order that fails to confirm after its capture is refunded once, its stock released once', async () => {
    const customer = await createCustomer({ creditLimitCents: 50_000 });
    const product = await createProduct({ priceCents: 2_000, stock: 6 });
    // Confirmation fails for good after the stock is taken and the payment captured: compensation
    // releases the stock and refunds the capture, each write losing its first answer.
    await setFaults([{ state: 'ConfirmOrder', rate: 1, error: 'ConfirmationFailed' }]);
    const before = await lostSoFar();
    await loseEveryFirstAnswer();
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 2 }]);
    expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: 'CONFIRMATION_FAILED' });
    await quiescentWrites();
    const account = (await eventsOf(/^Accounts.*Events/, customer.customerId)).filter(
      (e) => e.data.orderId === order.orderId,
    );
    expect(account.map((e) => e.type)).toEqual(['CreditCaptured', 'CreditRefunded']);
    const credit = await get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`);
    expect(credit.body.availableCreditCents).toBe(50_000);
    const stock = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${product.productId}`),
      (r) => r.body.available === 6,
    );
    expect(stock.body).toMatchObject({ available: 6, reserved: 0, sold: 0 });
    expect((await lostSoFar()) - before).toBeGreaterThanOrEqual(4);
  });

  test('orders and the saga: placed 202, confirmed with one capture of its total, stock sold once', async () => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 10 });
    const before = await lostSoFar();
    await loseEveryFirstAnswer();
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 3 }]);
    expect(order).toMatchObject({ status: 'CONFIRMED', totalCents: 3_000 });
    await quiescentWrites();
    // The order placed, reserved and confirmed: each once.
    const orderEvents = (await eventsOf(/^Orders.*Events/, order.orderId)).map((e) => e.type);
    expect(orderEvents.filter((t) => t === 'OrderPlaced')).toHaveLength(1);
    expect(orderEvents.filter((t) => t === 'OrderConfirmed')).toHaveLength(1);
    expect(new Set(orderEvents).size).toBe(orderEvents.length);
    // One capture of the order's total in the customer's account, and the credit it holds is exactly that.
    const account = await eventsOf(/^Accounts.*Events/, customer.customerId);
    const captures = account.filter((e) => e.type === 'CreditCaptured' && e.data.orderId === order.orderId);
    expect(captures).toHaveLength(1);
    expect(account.filter((e) => e.type === 'CreditRefunded')).toHaveLength(0);
    const credit = await get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`);
    expect(credit.body.availableCreditCents).toBe(100_000 - 3_000);
    const stock = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${product.productId}`),
      (r) => r.body.sold === 3,
    );
    expect(stock.body).toMatchObject({ available: 7, reserved: 0, sold: 3 });
    // The request's write, the saga's three steps and the projector's: every one lost its first answer.
    expect((await lostSoFar()) - before).toBeGreaterThanOrEqual(4);
  });

  test('compensation: an order past the credit limit is cancelled once, its stock released once', async () => {
    const customer = await createCustomer({ creditLimitCents: 1_000 });
    const product = await createProduct({ priceCents: 1_000, stock: 4 });
    await loseEveryFirstAnswer();
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 2 }]);
    expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: 'PAYMENT_DECLINED' });
    await quiescentWrites();
    const orderEvents = (await eventsOf(/^Orders.*Events/, order.orderId)).map((e) => e.type);
    expect(orderEvents.filter((t) => t === 'OrderCancelled')).toHaveLength(1);
    expect(new Set(orderEvents).size).toBe(orderEvents.length);
    const account = await eventsOf(/^Accounts.*Events/, customer.customerId);
    expect(account.filter((e) => e.type === 'CreditCaptured')).toHaveLength(0);
    const credit = await get<{ availableCreditCents: number }>(`/customers/${customer.customerId}`);
    expect(credit.body.availableCreditCents).toBe(1_000);
    const stock = await eventually(
      () => get<{ available: number; reserved: number; sold: number }>(`/products/${product.productId}`),
      (r) => r.body.available === 4,
    );
    expect(stock.body).toMatchObject({ available: 4, reserved: 0, sold: 0 });
  });
});
