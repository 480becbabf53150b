import { randomUUID } from 'node:crypto';
import {
  type ApiResponse,
  createCustomer,
  createProduct,
  eventually,
  get,
  localAdmin,
  post,
  quiescentWrites,
} from '../support/api';

/**
 * `Idempotency-Key` per the contract (shared/api.md): a repeat with the same key and
 * body answers the first response (status and body) and has no second effect;
 * the same key with another body is 409 IDEMPOTENCY_KEY_REUSED; a key is
 * scoped to its route and path.
 */

interface ProductView {
  productId: string;
  available: number;
  reserved: number;
  sold: number;
}
interface CustomerView {
  customerId: string;
  creditLimitCents: number;
  availableCreditCents: number;
}
interface OrderView {
  orderId: string;
  status: string;
  totalCents: number;
}

const newKey = () => `idem-${randomUUID()}`;
const withKey = (key: string) => ({ 'idempotency-key': key });

/** What a client can compare between two answers. */
const answer = (r: ApiResponse<unknown>) => ({
  status: r.status,
  body: r.body,
  location: r.headers.get('location'),
});

/** The product's stock once every write has been projected (GET answers from an eventually consistent view). */
const stock = async (productId: string) => {
  await quiescent();
  const { body } = await get<ProductView>(`/products/${productId}`);
  return { available: body.available, reserved: body.reserved, sold: body.sold };
};

/** Item writes per table once settled, leaving out the idempotency table (a replay may look its record up by a conditional put). */
const quiescent = () => quiescentWrites(/idempotency/i);

/** Runs `repeat` once everything before it has settled, and expects it to write nothing outside the idempotency table. */
async function expectNoDomainWrites(repeat: () => Promise<unknown>) {
  const before = await quiescent();
  await repeat();
  expect(await quiescent()).toEqual(before);
}

const expectKeyReused = (r: ApiResponse) => {
  expect({ status: r.status, body: r.body }).toEqual({
    status: 409,
    body: {
      error: { code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String), details: expect.any(Array) },
    },
  });
};

/** Waits until the saga has settled the order, and returns it. */
const settled = async (orderId: string) =>
  (
    await eventually(
      () => get<OrderView>(`/orders/${orderId}`),
      (r) => r.body.status === 'CONFIRMED' || r.body.status === 'CANCELLED',
      45_000,
    )
  ).body;

describe('a repeat with the same key and body answers the first response and has no second effect', () => {
  test('POST /customers: the same customer, registered once', async () => {
    const key = newKey();
    const body = { name: 'Idem Customer', email: 'idem@example.com', creditLimitCents: 7000 };
    const first = await post<CustomerView>('/customers', body, withKey(key));
    expect(first.status).toBe(201);
    let second!: ApiResponse<CustomerView>;
    await expectNoDomainWrites(async () => {
      second = await post<CustomerView>('/customers', body, withKey(key));
    });
    expect(answer(second)).toEqual(answer(first));
    expect(second.body.customerId).toBe(first.body.customerId);
    // The same body formatted differently is the same body.
    const reformatted = await post<CustomerView>('/customers', JSON.stringify(body, null, 2), withKey(key));
    expect(answer(reformatted)).toEqual(answer(first));
  });

  test('POST /products: the same product, created once', async () => {
    const key = newKey();
    const body = { sku: `IDEM-${randomUUID().slice(0, 8)}`, name: 'Idem', priceCents: 300, stock: 4 };
    const first = await post<ProductView>('/products', body, withKey(key));
    expect(first.status).toBe(201);
    let second!: ApiResponse<ProductView>;
    await expectNoDomainWrites(async () => {
      second = await post<ProductView>('/products', body, withKey(key));
    });
    expect(answer(second)).toEqual(answer(first));
  });

  test('POST /products/{id}/reservations: the reserved count rises once', async () => {
    const { productId } = await createProduct({ stock: 10 });
    const key = newKey();
    const path = `/products/${productId}/reservations`;
    const first = await post<{ reservationId: string }>(path, { quantity: 3 }, withKey(key));
    expect(first.status).toBe(201);
    let second!: ApiResponse<{ reservationId: string }>;
    await expectNoDomainWrites(async () => {
      second = await post<{ reservationId: string }>(path, { quantity: 3 }, withKey(key));
    });
    expect(answer(second)).toEqual(answer(first));
    expect(await stock(productId)).toEqual({ available: 7, reserved: 3, sold: 0 });
  });

  test('POST /products/{id}/restock: the stock is added once', async () => {
    const { productId } = await createProduct({ stock: 2 });
    const key = newKey();
    const path = `/products/${productId}/restock`;
    const first = await post<ProductView>(path, { quantity: 5 }, withKey(key));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ available: 7, reserved: 0, sold: 0 });
    let second!: ApiResponse<ProductView>;
    await expectNoDomainWrites(async () => {
      second = await post<ProductView>(path, { quantity: 5 }, withKey(key));
    });
    expect(answer(second)).toEqual(answer(first));
    expect(await stock(productId)).toEqual({ available: 7, reserved: 0, sold: 0 });
  });

  test('POST /orders: one order, sold and charged once', async () => {
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ stock: 10, priceCents: 1000 });
    const key = newKey();
    const body = { customerId: customer.customerId, items: [{ productId: product.productId, quantity: 3 }] };
    const first = await post<OrderView>('/orders', body, withKey(key));
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: 'PENDING', totalCents: 3000 });
    const second = await post<OrderView>('/orders', body, withKey(key));
    expect(answer(second)).toEqual(answer(first));

    const order = await settled(first.body.orderId);
    expect(order.status).toBe('CONFIRMED');
    const third = await post<OrderView>('/orders', body, withKey(key));
    expect(answer(third)).toEqual(answer(first));
    expect(await stock(product.productId)).toEqual({ available: 7, reserved: 0, sold: 3 });
    const { body: account } = await get<CustomerView>(`/customers/${customer.customerId}`);
    expect(account.availableCreditCents).toBe(100_000 - 3000);
  });

  test('a 1-char key and a 128-char key both work', async () => {
    const { productId } = await createProduct({ stock: 10 });
    const path = `/products/${productId}/reservations`;
    for (const key of ['k', 'k'.repeat(127) + randomUUID().slice(0, 1)]) {
      const first = await post(path, { quantity: 1 }, withKey(key));
      const second = await post(path, { quantity: 1 }, withKey(key));
      expect(first.status).toBe(201);
      expect(answer(second)).toEqual(answer(first));
    }
    expect(await stock(productId)).toMatchObject({ available: 8, reserved: 2 });
  });
});

describe('the same key with a different body is 409 IDEMPOTENCY_KEY_REUSED', () => {
  test('POST /customers', async () => {
    const key = newKey();
    const first = await post('/customers', { name: 'A', email: 'a@example.com' }, withKey(key));
    expect(first.status).toBe(201);
    await expectNoDomainWrites(async () => {
      expectKeyReused(await post('/customers', { name: 'A', email: 'b@example.com' }, withKey(key)));
    });
    // The first answer is still the key's answer.
    expect(answer(await post('/customers', { name: 'A', email: 'a@example.com' }, withKey(key)))).toEqual(
      answer(first),
    );
  });

  test('POST /products/{id}/reservations: the other quantity reserves nothing', async () => {
    const { productId } = await createProduct({ stock: 10 });
    const key = newKey();
    const path = `/products/${productId}/reservations`;
    expect((await post(path, { quantity: 1 }, withKey(key))).status).toBe(201);
    await expectNoDomainWrites(async () => {
      expectKeyReused(await post(path, { quantity: 2 }, withKey(key)));
    });
    expect(await stock(productId)).toEqual({ available: 9, reserved: 1, sold: 0 });
  });

  test('POST /products/{id}/restock: the other quantity adds nothing', async () => {
    const { productId } = await createProduct({ stock: 1 });
    const key = newKey();
    const path = `/products/${productId}/restock`;
    expect((await post(path, { quantity: 4 }, withKey(key))).status).toBe(200);
    expectKeyReused(await post(path, { quantity: 40 }, withKey(key)));
    expect(await stock(productId)).toEqual({ available: 5, reserved: 0, sold: 0 });
  });

  test('POST /products and POST /orders', async () => {
    const productKey = newKey();
    const sku = `IDEM-${randomUUID().slice(0, 8)}`;
    const product = await post<ProductView>(
      '/products',
      { sku, name: 'P', priceCents: 100, stock: 5 },
      withKey(productKey),
    );
    expect(product.status).toBe(201);
    expectKeyReused(
      await post('/products', { sku, name: 'P', priceCents: 101, stock: 5 }, withKey(productKey)),
    );

    const customer = await createCustomer();
    const orderKey = newKey();
    const item = { productId: product.body.productId, quantity: 1 };
    const order = await post<OrderView>(
      '/orders',
      { customerId: customer.customerId, items: [item] },
      withKey(orderKey),
    );
    expect(order.status).toBe(202);
    expectKeyReused(
      await post(
        '/orders',
        { customerId: customer.customerId, items: [{ ...item, quantity: 2 }] },
        withKey(orderKey),
      ),
    );
    await settled(order.body.orderId);
    expect(await stock(product.body.productId)).toMatchObject({ available: 4 });
  });
});

describe('a key is scoped to its route and path', () => {
  test('the same key on POST /customers and POST /products makes one of each', async () => {
    const key = newKey();
    const customer = await post<CustomerView>(
      '/customers',
      { name: 'S', email: 's@example.com' },
      withKey(key),
    );
    const product = await post<ProductView>(
      '/products',
      { sku: `SC-${randomUUID().slice(0, 8)}`, name: 'S', priceCents: 1, stock: 1 },
      withKey(key),
    );
    expect([customer.status, product.status]).toEqual([201, 201]);
    expect(customer.body.customerId).toMatch(/^cus_/);
    expect(product.body.productId).toMatch(/^prd_/);
  });

  test('the same key and body on the reservations of two products reserves on each', async () => {
    const a = await createProduct({ stock: 5 });
    const b = await createProduct({ stock: 5 });
    const key = newKey();
    const ra = await post<{ reservationId: string; productId: string }>(
      `/products/${a.productId}/reservations`,
      { quantity: 2 },
      withKey(key),
    );
    const rb = await post<{ reservationId: string; productId: string }>(
      `/products/${b.productId}/reservations`,
      { quantity: 2 },
      withKey(key),
    );
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(ra.body.productId).toBe(a.productId);
    expect(rb.body.productId).toBe(b.productId);
    expect(ra.body.reservationId).not.toBe(rb.body.reservationId);
    expect(await stock(a.productId)).toMatchObject({ available: 3, reserved: 2 });
    expect(await stock(b.productId)).toMatchObject({ available: 3, reserved: 2 });
  });

  test('the same key and body on reservations and restock of one product does both', async () => {
    const { productId } = await createProduct({ stock: 5 });
    const key = newKey();
    const reserved = await post(`/products/${productId}/reservations`, { quantity: 2 }, withKey(key));
    const restocked = await post<ProductView>(
      `/products/${productId}/restock`,
      { quantity: 2 },
      withKey(key),
    );
    expect([reserved.status, restocked.status]).toEqual([201, 200]);
    expect(restocked.body).toMatchObject({ available: 5, reserved: 2, sold: 0 });
  });
});

describe('concurrent repeats: 10 at once with one key answer the same first response, with one effect', () => {
  const concurrently = <T>(n: number, send: () => Promise<ApiResponse<T>>) =>
    Promise.all(Array.from({ length: n }, send));

  const expectAllSame = (responses: ApiResponse<unknown>[], status: number) => {
    expect(responses[0]!.status).toBe(status);
    const first = answer(responses[0]!);
    expect(responses.map(answer)).toEqual(responses.map(() => first));
  };

  test('POST /products/{id}/reservations', async () => {
    const { productId } = await createProduct({ stock: 20 });
    const key = newKey();
    const responses = await concurrently(10, () =>
      post(`/products/${productId}/reservations`, { quantity: 3 }, withKey(key)),
    );
    expectAllSame(responses, 201);
    expect(await stock(productId)).toEqual({ available: 17, reserved: 3, sold: 0 });
  });

  test('POST /products/{id}/restock', async () => {
    const { productId } = await createProduct({ stock: 1 });
    const key = newKey();
    const responses = await concurrently(10, () =>
      post(`/products/${productId}/restock`, { quantity: 6 }, withKey(key)),
    );
    expectAllSame(responses, 200);
    expect(await stock(productId)).toEqual({ available: 7, reserved: 0, sold: 0 });
  });

  test('POST /customers', async () => {
    const key = newKey();
    const responses = await concurrently(10, () =>
      post('/customers', { name: 'Many', email: 'many@example.com' }, withKey(key)),
    );
    expectAllSame(responses, 201);
  });

  test('POST /orders: one order, sold and charged once', async () => {
    const customer = await createCustomer({ creditLimitCents: 50_000 });
    const product = await createProduct({ stock: 10, priceCents: 700 });
    const key = newKey();
    const body = { customerId: customer.customerId, items: [{ productId: product.productId, quantity: 2 }] };
    const responses = await concurrently(10, () => post<OrderView>('/orders', body, withKey(key)));
    expectAllSame(responses, 202);
    expect(await settled(responses[0]!.body.orderId)).toMatchObject({
      status: 'CONFIRMED',
      totalCents: 1400,
    });
    expect(await stock(product.productId)).toEqual({ available: 8, reserved: 0, sold: 2 });
    const { body: account } = await get<CustomerView>(`/customers/${customer.customerId}`);
    expect(account.availableCreditCents).toBe(50_000 - 1400);
  });
});

describe('a refusal decided by the command is replayed too', () => {
  test('409 INSUFFICIENT_STOCK stays the answer after a restock; a fresh key reserves', async () => {
    const { productId } = await createProduct({ stock: 3 });
    const key = newKey();
    const path = `/products/${productId}/reservations`;
    const first = await post(path, { quantity: 5 }, withKey(key));
    expect(first.status).toBe(409);
    expect(first.body).toHaveProperty('error.code', 'INSUFFICIENT_STOCK');
    expect((await post(`/products/${productId}/restock`, { quantity: 10 })).status).toBe(200);
    let second!: ApiResponse;
    await expectNoDomainWrites(async () => {
      second = await post(path, { quantity: 5 }, withKey(key));
    });
    expect(answer(second)).toEqual(answer(first));
    expect(await stock(productId)).toEqual({ available: 13, reserved: 0, sold: 0 });
    expect((await post(path, { quantity: 5 }, withKey(newKey()))).status).toBe(201);
  });

  test('404 NOT_FOUND for an unknown product on POST /orders is replayed', async () => {
    const customer = await createCustomer();
    const key = newKey();
    const body = {
      customerId: customer.customerId,
      items: [{ productId: `prd_${'0'.repeat(32)}`, quantity: 1 }],
    };
    const first = await post('/orders', body, withKey(key));
    expect(first.status).toBe(404);
    expect(first.body).toHaveProperty('error.code', 'NOT_FOUND');
    expect(answer(await post('/orders', body, withKey(key)))).toEqual(answer(first));
  });
});

describe('a keyed creation reads nothing first; a refusal is kept where the creation would be', () => {
  /** Reads of the idempotency table so far, from the local cloud's counters. */
  const idempotencyReads = async () => {
    const { reads } = await localAdmin<{ reads: Record<string, Record<string, number>> }>('stats');
    return Object.entries(reads)
      .filter(([table]) => /^Idempotency/.test(table))
      .reduce((sum, [, calls]) => sum + Object.values(calls).reduce((a, b) => a + b, 0), 0);
  };
  /** The item writes per table that `request` makes, once everything before and after it settled. */
  const writesOf = async (request: () => Promise<unknown>) => {
    const before = await quiescentWrites();
    await request();
    const after = await quiescentWrites();
    return Object.fromEntries(
      Object.entries(after)
        .map(([table, n]) => [table, n - (before[table] ?? 0)] as const)
        .filter(([, n]) => n !== 0),
    );
  };

  test('keyed customers, reservations and orders are made with no read of the idempotency table', async () => {
    const { productId } = await createProduct({ stock: 10 });
    const reads = await idempotencyReads();
    const customer = await post<CustomerView>(
      '/customers',
      { name: 'Keyed', email: 'keyed@example.com', creditLimitCents: 10_000 },
      withKey(newKey()),
    );
    expect(customer.status).toBe(201);
    expect(
      (await post(`/products/${productId}/reservations`, { quantity: 1 }, withKey(newKey()))).status,
    ).toBe(201);
    const order = await post<OrderView>(
      '/orders',
      { customerId: customer.body.customerId, items: [{ productId, quantity: 1 }] },
      withKey(newKey()),
    );
    expect(order.status).toBe(202);
    expect(await idempotencyReads()).toBe(reads);
    expect(await settled(order.body.orderId)).toMatchObject({ status: 'CONFIRMED' });
  });

  test("a refused order leaves one item in the orders' events table, and no order", async () => {
    const customer = await createCustomer();
    const key = newKey();
    const body = {
      customerId: customer.customerId,
      items: [{ productId: `prd_${'1'.repeat(32)}`, quantity: 1 }],
    };
    let first!: ApiResponse;
    const writes = await writesOf(async () => {
      first = await post('/orders', body, withKey(key));
    });
    expect(first.status).toBe(404);
    expect(Object.entries(writes)).toEqual([[expect.stringMatching(/^OrdersEventsTable/), 1]]);
    // The repeat runs the command again, which is refused again and finds the first refusal: no write.
    let second!: ApiResponse;
    expect(
      await writesOf(async () => {
        second = await post('/orders', body, withKey(key));
      }),
    ).toEqual({});
    expect(answer(second)).toEqual(answer(first));
    // The same key with another body, which would be placed: the key is used.
    const { productId } = await createProduct({ stock: 5 });
    const reused = await post('/orders', { ...body, items: [{ productId, quantity: 1 }] }, withKey(key));
    expectKeyReused(reused);
    expect(await stock(productId)).toEqual({ available: 5, reserved: 0, sold: 0 });
  });
});

describe('bad input does not use up a key', () => {
  test('a 400 with a key, then a valid body with the same key, is a first request', async () => {
    const { productId } = await createProduct({ stock: 5 });
    const key = newKey();
    const path = `/products/${productId}/reservations`;
    const bad = await post(path, { quantity: 0 }, withKey(key));
    expect(bad.status).toBe(400);
    expect(bad.body).toHaveProperty('error.code', 'VALIDATION_ERROR');
    const good = await post(path, { quantity: 2 }, withKey(key));
    expect(good.status).toBe(201);
    expect(await stock(productId)).toMatchObject({ available: 3, reserved: 2 });
  });
});
