import { join } from 'node:path';
import { CACHE_DIR, type LocalProcess, startLocalProcess } from '@commerce/local-cloud';
import { withDefaults } from '../support/api';
import { checkAnswer } from '../support/contract';
import { eventsOf } from '../support/event-log';

/**
 * Expiry and deadlines need timings of seconds, not the stage's minutes: this
 * suite runs its own local cloud, synthesized with a 1 s reservation TTL, a
 * 2 s saga deadline, a 1 s sweeper grace, and scheduled rules firing every 250 ms.
 */
let cloud: LocalProcess;
/** A reservation's events, read from the inventory event store through this cloud's AWS endpoint. */
const reservationEvents = (reservationId: string) =>
  eventsOf(/^InventoryEvents/, reservationId, cloud.awsEndpoint);

const setFaults = async (rules: unknown[]) => {
  await fetch(`${cloud.awsEndpoint}/_local/faults`, { method: 'POST', body: JSON.stringify(rules) });
};
const call = async (method: string, path: string, body?: unknown) => {
  // As this cloud's operator (its own issuer), with an Idempotency-Key where the contract requires one.
  const headers = await withDefaults(method, path, {}, cloud.awsEndpoint);
  const r = await fetch(`${cloud.apiUrl}${path}`, {
    method,
    ...(body
      ? { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }
      : { headers }),
  });
  const text = await r.text();
  checkAnswer({ method, path, status: r.status, headers: r.headers, text });
  return { status: r.status, body: JSON.parse(text) as Record<string, unknown> };
};

beforeAll(async () => {
  cloud = await startLocalProcess([
    '--port',
    '0',
    '--assembly-dir',
    join(CACHE_DIR, 'assembly-expiry'),
    '--reservation-ttl-seconds',
    '1',
    '--saga-deadline-seconds',
    '2',
    '--sweeper-grace-seconds',
    '1',
    '--schedule-interval-ms',
    '250',
  ]);
}, 240_000);
afterAll(() => cloud?.stop());

test('a reservation expires at expiresAt and its stock becomes available again', async () => {
  const product = await call('POST', '/products', {
    sku: 'EXP-1',
    name: 'Expiring',
    priceCents: 100,
    stock: 5,
  });
  const productId = String(product.body.productId);
  const reserved = await call('POST', `/products/${productId}/reservations`, { quantity: 4 });
  expect(reserved.status).toBe(201);
  const expiresAt = Date.parse(String(reserved.body.expiresAt));
  expect(expiresAt - Date.now()).toBeLessThanOrEqual(1_000);

  // The event store says when, and why, the reservation was given back: not before its time.
  const deadline = Date.now() + 10_000;
  let events = await reservationEvents(String(reserved.body.reservationId));
  while (events.length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    events = await reservationEvents(String(reserved.body.reservationId));
  }
  expect(events.map((e) => e.type)).toEqual(['ReservationPlaced', 'ReservationReleased']);
  expect(events[1]!.data).toMatchObject({ reason: 'EXPIRED' });
  expect(Date.parse(events[1]!.occurredAt)).toBeGreaterThanOrEqual(expiresAt);
  // And the read model comes to show the stock available again.
  let view = (await call('GET', `/products/${productId}`)).body;
  while ((view.available !== 5 || view.reserved !== 0) && Date.now() < deadline + 5_000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    view = (await call('GET', `/products/${productId}`)).body;
  }
  expect(view).toMatchObject({ available: 5, reserved: 0, sold: 0 });

  // Releasing an expired reservation answers as a release and changes nothing.
  const release = await call(
    'DELETE',
    `/products/${productId}/reservations/${String(reserved.body.reservationId)}`,
  );
  expect(release).toEqual({
    status: 200,
    body: { reservationId: reserved.body.reservationId, status: 'RELEASED' },
  });
  expect((await call('GET', `/products/${productId}`)).body).toMatchObject({ available: 5, reserved: 0 });
});

async function settledOrder(orderId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const order = (await call('GET', `/orders/${orderId}`)).body;
    if (order.status !== 'PENDING' || Date.now() > deadline) return order;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function customerAndProduct() {
  const customer = await call('POST', '/customers', {
    name: 'Late',
    email: 'late@example.com',
    creditLimitCents: 10_000,
  });
  const product = await call('POST', '/products', {
    sku: 'LATE-1',
    name: 'Late',
    priceCents: 1000,
    stock: 5,
  });
  return { customerId: String(customer.body.customerId), productId: String(product.body.productId) };
}

async function expectAllUndone(customerId: string, productId: string) {
  const deadline = Date.now() + 5_000;
  let stock = (await call('GET', `/products/${productId}`)).body;
  while (stock.available !== 5 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    stock = (await call('GET', `/products/${productId}`)).body;
  }
  expect(stock).toMatchObject({ available: 5, reserved: 0, sold: 0 });
  expect((await call('GET', `/customers/${customerId}`)).body).toMatchObject({
    availableCreditCents: 10_000,
  });
}

test('a saga past its deadline is undone and the order cancelled with TIMEOUT', async () => {
  // Payment is reached only after the 2 s deadline: the saga turns to compensation.
  await setFaults([{ state: 'CapturePayment', rate: 1, delayMs: 2_500 }]);
  const { customerId, productId } = await customerAndProduct();
  const placed = await call('POST', '/orders', { customerId, items: [{ productId, quantity: 2 }] });
  const order = await settledOrder(String(placed.body.orderId));
  await setFaults([]);
  expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: 'TIMEOUT' });
  await expectAllUndone(customerId, productId);
});

test('an order whose saga failed is swept: cancelled with TIMEOUT, nothing left held', async () => {
  // Every execution fails at its first step (before claiming the order), and its compensation keeps
  // failing: only the sweeper can cancel the order while these faults hold.
  await setFaults(['ReserveStock', 'CancelOrder'].map((state) => ({ state, rate: 1, error: 'Broken' })));
  const { customerId, productId } = await customerAndProduct();
  const placed = await call('POST', '/orders', { customerId, items: [{ productId, quantity: 2 }] });
  const order = await settledOrder(String(placed.body.orderId));
  await setFaults([]);
  expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: 'TIMEOUT' });
  await expectAllUndone(customerId, productId);
});

/** Invocations of the saga sweeper that failed so far (the local cloud's counters). */
async function sweeperErrors() {
  const stats = (await (await fetch(`${cloud.awsEndpoint}/_local/stats`)).json()) as {
    invocations?: Record<string, { errors: number }>;
  };
  return Object.entries(stats.invocations ?? {})
    .filter(([name]) => /Saga.*Sweeper/.test(name))
    .reduce((sum, [, counter]) => sum + counter.errors, 0);
}

test('an order whose cancellation by the sweeper fails is swept again: cancelled, its stock and credit given back', async () => {
  // A saga run to its end first, so that the one below meets warm sandboxes and captures well within its 2 s.
  const warm = await customerAndProduct();
  const warmUp = await call('POST', '/orders', {
    customerId: warm.customerId,
    items: [{ productId: warm.productId, quantity: 1 }],
  });
  expect((await settledOrder(String(warmUp.body.orderId))).status).toBe('CONFIRMED');
  // The saga takes the stock and the credit, then fails to confirm and fails to compensate: only the
  // sweeper can end the order while these faults hold.
  await setFaults(['ConfirmOrder', 'CancelOrder'].map((state) => ({ state, rate: 1, error: 'Broken' })));
  const { customerId, productId } = await customerAndProduct();
  const placed = await call('POST', '/orders', { customerId, items: [{ productId, quantity: 2 }] });
  const orderId = String(placed.body.orderId);
  const held = Date.now() + 5_000;
  let product = (await call('GET', `/products/${productId}`)).body;
  let customer = (await call('GET', `/customers/${customerId}`)).body;
  while ((product.reserved !== 2 || customer.availableCreditCents !== 8_000) && Date.now() < held) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    product = (await call('GET', `/products/${productId}`)).body;
    customer = (await call('GET', `/customers/${customerId}`)).body;
  }
  expect([product.reserved, customer.availableCreditCents]).toEqual([2, 8_000]);
  // Before the deadline (2 s) and the grace (1 s) pass: DynamoDB refuses the cancellation's transaction.
  await fetch(`${cloud.awsEndpoint}/_local/faults/dynamodb`, {
    method: 'POST',
    body: JSON.stringify([{ error: 'ThrottlingException', rate: 1, operations: ['TransactWriteItems'] }]),
  });
  try {
    expect((await call('GET', `/orders/${orderId}`)).body.status).toBe('PENDING');
    // The sweeps fail, each after trying every order of its window, so that its window is swept again.
    const failing = Date.now() + 30_000;
    while ((await sweeperErrors()) === 0 && Date.now() < failing) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await sweeperErrors()).toBeGreaterThan(0);
    // Still held, still PENDING: nothing was half done.
    expect((await call('GET', `/orders/${orderId}`)).body.status).toBe('PENDING');
    expect((await call('GET', `/products/${productId}`)).body).toMatchObject({ reserved: 2 });
  } finally {
    await fetch(`${cloud.awsEndpoint}/_local/faults/dynamodb`, { method: 'POST', body: '[]' });
  }
  // The next sweep finds the order still in its window, and cancels it (the saga's compensation still fails).
  const order = await settledOrder(orderId);
  await setFaults([]);
  expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: 'TIMEOUT' });
  await expectAllUndone(customerId, productId);
});

test('the sweepers lose their writes’ answers and die after their work: each release and cancellation made once', async () => {
  const faults = (kind: string, rules: unknown) =>
    fetch(`${cloud.awsEndpoint}/_local/faults/${kind}`, { method: 'POST', body: JSON.stringify(rules) });
  // A saga run to its end first, so that the one below meets warm sandboxes and captures within its 2 s
  // (on a busy host even this one may pass its deadline: how it ends does not matter here).
  const warm = await customerAndProduct();
  const warmUp = await call('POST', '/orders', {
    customerId: warm.customerId,
    items: [{ productId: warm.productId, quantity: 1 }],
  });
  expect((await settledOrder(String(warmUp.body.orderId))).status).not.toBe('PENDING');
  // The saga takes the stock and the credit, then fails to confirm and to compensate: the sweeper ends it.
  await setFaults(['ConfirmOrder', 'CancelOrder'].map((state) => ({ state, rate: 1, error: 'Broken' })));
  const { customerId, productId } = await customerAndProduct();
  // Every write loses its first answer (the SDK's retry finds it made), and every run of the expirer and
  // the sweeper dies once its work is done: the release and the cancellation are made by runs that die,
  // and every run after them must find them made.
  await faults('dynamodb', [{ kind: 'lost-answer', rate: 1, once: true }]);
  await faults('functions', [
    { when: 'after-work', rate: 1, functions: ['InventoryExpirer', 'SagaSweeper'] },
  ]);
  try {
    const reserved = await call('POST', `/products/${productId}/reservations`, { quantity: 1 });
    expect(reserved.status).toBe(201);
    const placed = await call('POST', '/orders', { customerId, items: [{ productId, quantity: 2 }] });
    const orderId = String(placed.body.orderId);
    const order = await settledOrder(orderId);
    expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: 'TIMEOUT' });
    await expectAllUndone(customerId, productId);
    // A few more runs, each dying, find nothing left to do.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // The reservation expired once, and the order was cancelled once, its credit refunded once.
    const reservation = await reservationEvents(String(reserved.body.reservationId));
    expect(reservation.map((e) => e.type)).toEqual(['ReservationPlaced', 'ReservationReleased']);
    const cancelled = (await eventsOf(/^Orders.*Events/, orderId, cloud.awsEndpoint)).filter(
      (e) => e.type === 'OrderCancelled',
    );
    expect(cancelled).toHaveLength(1);
    const account = (await eventsOf(/^Accounts.*Events/, customerId, cloud.awsEndpoint)).filter(
      (e) => e.data.orderId === orderId,
    );
    // Captured before its deadline and refunded by the sweep; on a host slow enough for the deadline to
    // pass before the capture, neither: never one without the other, never twice.
    expect([[], ['CreditCaptured', 'CreditRefunded']]).toContainEqual(account.map((e) => e.type));
    const { injected } = (await (await fetch(`${cloud.awsEndpoint}/_local/faults`)).json()) as {
      injected: { functions: { afterWork: number }; dynamodb: { lostAnswers: number } };
    };
    expect(injected.functions.afterWork).toBeGreaterThanOrEqual(4);
    expect(injected.dynamodb.lostAnswers).toBeGreaterThan(0);
  } finally {
    await faults('dynamodb', []);
    await faults('functions', []);
    await setFaults([]);
  }
});
