import { randomUUID } from 'node:crypto';
import {
  type ApiResponse,
  awsEndpoint,
  createCustomer,
  createProduct,
  eventually,
  get,
  type OrderView,
  post,
  setFaults,
} from '../support/api';

/**
 * `POST /orders` with `Prefer: wait=N` (shared/api.md, RFC 7240): `201` with
 * the final order when the saga ends within N seconds, else the `202` of a
 * request without the header; `Preference-Applied: wait=N` whenever the
 * server waited. A `wait` it does not honour is ignored, never an error.
 */

interface Placed {
  orderId: string;
  status: string;
  totalCents: number;
}

const prefer = (value: string) => ({ prefer: value });
const timed = async <T>(request: () => Promise<T>) => {
  const started = Date.now();
  const response = await request();
  return { response, ms: Date.now() - started };
};

afterEach(() => setFaults([]));

async function orderOf(options: { creditLimitCents?: number; stock?: number; priceCents?: number } = {}) {
  const customer = await createCustomer({ creditLimitCents: options.creditLimitCents ?? 1_000_000 });
  const product = await createProduct({
    stock: options.stock ?? 100,
    priceCents: options.priceCents ?? 1250,
  });
  return { customerId: customer.customerId, items: [{ productId: product.productId, quantity: 2 }] };
}

/** A 201 of a waited order: the final order exactly as GET shows it, where it is, and the wait applied. */
async function expectFinal(r: ApiResponse<unknown>, wait: number) {
  expect(r.status).toBe(201);
  expect(r.headers.get('preference-applied')).toBe(`wait=${wait}`);
  const order = r.body as OrderView;
  expect(r.headers.get('location')).toBe(`/orders/${order.orderId}`);
  expect(order.status).not.toBe('PENDING');
  const read = await get<OrderView>(`/orders/${order.orderId}`);
  expect(r.body).toEqual(read.body);
  return order;
}

describe('POST /orders with Prefer: wait=N', () => {
  test('answers 201 with the confirmed order when the saga ends in time', async () => {
    const body = await orderOf();
    const { response, ms } = await timed(() => post('/orders', body, prefer('wait=5')));
    const order = await expectFinal(response, 5);
    expect(order).toMatchObject({ status: 'CONFIRMED', totalCents: 2500, customerId: body.customerId });
    expect(order.paymentId).toEqual(expect.any(String));
    expect(ms).toBeLessThan(5_000);
  });

  test('answers 201 with the cancelled order when the saga undoes it in time', async () => {
    const declined = await post('/orders', await orderOf({ creditLimitCents: 100 }), prefer('wait=5'));
    expect(await expectFinal(declined, 5)).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'PAYMENT_DECLINED',
    });
    const outOfStock = await post('/orders', await orderOf({ stock: 1 }), prefer('wait=5'));
    expect(await expectFinal(outOfStock, 5)).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'OUT_OF_STOCK',
    });
  });

  test('answers 202 after about N seconds when the saga has not ended, with the wait applied', async () => {
    await setFaults([{ state: 'ReserveStock', rate: 1, delayMs: 4_000 }]);
    const body = await orderOf();
    const waited = await timed(() => post<Placed>('/orders', body, prefer('wait=1')));
    expect(waited.response.status).toBe(202);
    expect(waited.response.headers.get('preference-applied')).toBe('wait=1');
    expect(waited.response.body).toEqual({
      orderId: expect.any(String),
      status: 'PENDING',
      totalCents: 2500,
    });
    expect(waited.response.headers.get('location')).toBe(`/orders/${waited.response.body.orderId}`);
    expect(waited.ms).toBeGreaterThanOrEqual(950);
    expect(waited.ms).toBeLessThan(3_000);
    await setFaults([]);
    const final = await eventually(
      () => get<OrderView>(`/orders/${waited.response.body.orderId}`),
      (r) => r.body.status !== 'PENDING',
      15_000,
    );
    expect(final.body.status).toBe('CONFIRMED');
  });

  test('without the header, the answer is the 202 of before, with no Preference-Applied', async () => {
    const r = await post<Placed>('/orders', await orderOf());
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ orderId: expect.any(String), status: 'PENDING', totalCents: 2500 });
    expect(r.headers.get('preference-applied')).toBeNull();
  });

  test.each([
    'wait=0',
    'wait=11',
    'wait=600',
    'wait=2.5',
    'wait=-1',
    'wait=abc',
    'wait=',
    'wait',
    'respond-async',
    'wait=0, wait=5',
    'handling=strict;;;=',
  ])(
    'a wait it does not honour (%p) is ignored: 202 at once, no Preference-Applied, never an error',
    async (value) => {
      // The saga here ends well within a second: had the wait been applied, the answer would be 201.
      const r = await post<Placed>('/orders', await orderOf(), prefer(value));
      expect(r.status).toBe(202);
      expect(r.body.status).toBe('PENDING');
      expect(r.headers.get('preference-applied')).toBeNull();
    },
  );

  test('wait among other preferences, and the first instance of it, is honoured', async () => {
    const r = await post('/orders', await orderOf(), prefer('respond-async, WAIT="4";x=y, wait=1'));
    await expectFinal(r, 4);
  });

  test('bad input is still refused as without the header, at once', async () => {
    const { response, ms } = await timed(() =>
      post('/orders', { customerId: 'cus_nobody', items: [] }, prefer('wait=5')),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('preference-applied')).toBeNull();
    expect(ms).toBeLessThan(2_000);
  });
});

describe('Prefer: wait=N with an Idempotency-Key', () => {
  const withKey = (key: string, wait?: string) => ({
    'idempotency-key': key,
    ...(wait ? prefer(wait) : {}),
  });

  test('a repeat of a request answered 201 answers the same 201, and places nothing more', async () => {
    const key = `wait-${randomUUID()}`;
    const body = await orderOf();
    const first = await post<OrderView>('/orders', body, withKey(key, 'wait=5'));
    await expectFinal(first, 5);
    const repeat = await post<OrderView>('/orders', body, withKey(key, 'wait=5'));
    expect({
      status: repeat.status,
      body: repeat.body,
      applied: repeat.headers.get('preference-applied'),
    }).toEqual({
      status: 201,
      body: first.body,
      applied: 'wait=5',
    });
    // The same key with another body is still a reuse, waited for or not.
    const reused = await post(
      '/orders',
      { ...body, items: [{ ...body.items[0]!, quantity: 3 }] },
      withKey(key, 'wait=5'),
    );
    expect(reused.status).toBe(409);
  });

  test('a repeat of a request answered 202 answers the order as it is now: 201 once final with a wait, the first 202 without', async () => {
    await setFaults([{ state: 'ReserveStock', rate: 1, delayMs: 3_000 }]);
    const key = `wait-${randomUUID()}`;
    const body = await orderOf();
    const first = await post<Placed>('/orders', body, withKey(key, 'wait=1'));
    expect(first.status).toBe(202);
    expect(first.headers.get('preference-applied')).toBe('wait=1');
    // Still running: a repeat that waits 1 s more is answered 202 again, the same body.
    const early = await post<Placed>('/orders', body, withKey(key, 'wait=1'));
    expect({ status: early.status, body: early.body }).toEqual({ status: 202, body: first.body });
    await setFaults([]);
    await eventually(
      () => get<OrderView>(`/orders/${first.body.orderId}`),
      (r) => r.body.status !== 'PENDING',
      15_000,
    );
    const late = await post<OrderView>('/orders', body, withKey(key, 'wait=1'));
    expect(await expectFinal(late, 1)).toMatchObject({ orderId: first.body.orderId, status: 'CONFIRMED' });
    // Without the header, the repeat answers the first response of a request without it: the 202.
    const plain = await post<Placed>('/orders', body, withKey(key));
    expect({
      status: plain.status,
      body: plain.body,
      applied: plain.headers.get('preference-applied'),
    }).toEqual({
      status: 202,
      body: first.body,
      applied: null,
    });
  });
});

describe('several waiting requests at once on the local cloud', () => {
  interface Pool {
    sandboxes: number;
    started: number;
    pauses: number;
    mostPaused: number;
  }
  const ordersApiPool = async () => {
    const pools = (await (await fetch(`${awsEndpoint()}/_local/sandboxes`)).json()) as Record<string, Pool>;
    return Object.entries(pools).find(([id]) => id.startsWith('OrdersApi'))![1];
  };

  test('8 waits on slow sagas: each lends its sandbox once it lasts, every answer within the wait, a GET meanwhile too', async () => {
    const bodies = await Promise.all(Array.from({ length: 8 }, () => orderOf()));
    const probe = await post<Placed>('/orders', await orderOf());
    const before = await ordersApiPool();
    // Each saga takes 2 s: each waiting request holds its sandbox that long (the orders API has 1–2 of its own).
    await setFaults([{ state: 'ReserveStock', rate: 1, delayMs: 2_000 }]);
    const waiting = Promise.all(
      bodies.map((b) => timed(() => post<OrderView>('/orders', b, prefer('wait=5')))),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const read = await timed(() => get<OrderView>(`/orders/${probe.body.orderId}`));
    const answers = await waiting;
    const after = await ordersApiPool();

    expect(read.response.status).toBe(200);
    // Behind them in the queue, it waits at most about N: a wait counts from the request's arrival, so a
    // request that queued for its sandbox waits only what is left of N once it runs.
    expect(read.ms).toBeLessThan(6_000);
    for (const { response, ms } of answers) {
      expect([201, 202]).toContain(response.status);
      expect(response.headers.get('preference-applied')).toBe('wait=5');
      // N counts from the request's arrival; the answer then takes one last read.
      expect(ms).toBeLessThan(6_000);
    }
    // Waits that last lend their sandbox's room: other requests got sandboxes of their own, and waited alongside.
    expect(after.pauses).toBeGreaterThan(before.pauses);
    expect(after.started).toBeGreaterThan(before.started);
    expect(after.mostPaused).toBeGreaterThanOrEqual(2);
  });
});
