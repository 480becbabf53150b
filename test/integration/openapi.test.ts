import document from '../../openapi/openapi.json';
import { apiClient, createProduct, eventually, get, SHOP, tokenFor } from '../support/api';

/**
 * The API serves its own OpenAPI document and reference page (as routes of
 * the template, from the docs function), and a client generated from that
 * document (openapi-typescript types, openapi-fetch) drives it: a contract
 * change that breaks this client fails the build (tsc) before this test.
 */
describe('the API describes itself', () => {
  test('GET /openapi.json serves the committed document', async () => {
    const r = await get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body).toEqual(document);
  });

  test('GET /docs serves a self-contained reference page with every operation and schema', async () => {
    const r = await get<string>('/docs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const method of Object.keys(methods)) expect(r.body).toContain(`${method.toUpperCase()} ${path}`);
    }
    for (const name of Object.keys(document.components.schemas))
      expect(r.body).toContain(`id="schema-${name}"`);
    // Nothing loaded from elsewhere: no script at all, and no absolute URL in src or href.
    expect(r.body).not.toMatch(/<script|<link|(src|href)="(https?:)?\/\//);
  });
});

describe('a typed client generated from the document', () => {
  // The operator's token, sent by the client's middleware.
  const api = apiClient();

  test("takes a shop caller's token through its middleware: the caller registers and reads itself", async () => {
    const shop = apiClient(tokenFor(`typed-${Date.now()}`, SHOP));
    const registered = await shop.POST('/customers', {
      body: { name: 'Typed Shopper', email: 'typed-shopper@example.com' },
    });
    expect(registered.response.status).toBe(201);
    const read = await shop.GET('/customers/{customerId}', {
      params: { path: { customerId: registered.data!.customerId } },
    });
    expect(read.data).toMatchObject({ customerId: registered.data!.customerId, name: 'Typed Shopper' });
    // Another shop caller does not find it.
    const stranger = apiClient(tokenFor(`typed-stranger-${Date.now()}`, SHOP));
    const hidden = await stranger.GET('/customers/{customerId}', {
      params: { path: { customerId: registered.data!.customerId } },
    });
    expect(hidden.response.status).toBe(404);
  });

  test('places an order for a customer and product it created, and follows it to its end', async () => {
    const customer = await api.POST('/customers', {
      body: { name: 'Typed Client', email: 'typed@example.com', creditLimitCents: 100_000 },
    });
    expect(customer.response.status).toBe(201);
    const product = await api.POST('/products', {
      body: { sku: `TYPED-${Date.now()}`, name: 'Typed widget', priceCents: 1250, stock: 5 },
    });
    expect(product.data?.available).toBe(5);
    const placed = await api.POST('/orders', {
      params: { header: { 'Idempotency-Key': `typed-${Date.now()}` } },
      body: {
        customerId: customer.data!.customerId,
        items: [{ productId: product.data!.productId, quantity: 2 }],
      },
    });
    expect(placed.response.status).toBe(202);
    expect(placed.response.headers.get('location')).toBe(`/orders/${placed.data!.orderId}`);
    if (placed.response.status !== 202 || !placed.data || !('totalCents' in placed.data))
      throw new Error('not placed');
    expect(placed.data.totalCents).toBe(2500);

    const final = await eventually(
      () => api.GET('/orders/{orderId}', { params: { path: { orderId: placed.data.orderId } } }),
      (r) => r.data?.status !== 'PENDING',
      30_000,
    );
    expect(final.data).toMatchObject({ status: 'CONFIRMED', totalCents: 2500 });
    const payment = await api.GET('/payments/{paymentId}', {
      params: { path: { paymentId: final.data!.paymentId! } },
    });
    expect(payment.data).toMatchObject({ status: 'CAPTURED', amountCents: 2500 });
    const saga = await api.GET('/orders/{orderId}/saga', {
      params: { path: { orderId: placed.data.orderId } },
    });
    expect(saga.data?.steps.map((s) => s.name)).toEqual(
      expect.arrayContaining(['ReserveStock', 'CapturePayment', 'ConfirmOrder']),
    );
  });

  test('reserves, is refused past the stock, and releases, with the errors typed', async () => {
    const { productId } = await createProduct({ stock: 3 });
    const path = { productId };
    const held = await api.POST('/products/{productId}/reservations', {
      params: { path, header: { 'Idempotency-Key': `held-${productId}` } },
      body: { quantity: 3 },
    });
    expect(held.data?.status).toBe('RESERVED');
    const refused = await api.POST('/products/{productId}/reservations', {
      params: { path, header: { 'Idempotency-Key': `refused-${productId}` } },
      body: { quantity: 1 },
    });
    expect(refused.response.status).toBe(409);
    // The error type says what a client must handle: the contract's shape, or API Gateway's own message.
    const conflict = refused.error && 'error' in refused.error ? refused.error.error : undefined;
    expect(conflict?.code).toBe('INSUFFICIENT_STOCK');
    const released = await api.DELETE('/products/{productId}/reservations/{reservationId}', {
      params: { path: { productId, reservationId: held.data!.reservationId } },
    });
    expect(released.data).toEqual({ reservationId: held.data!.reservationId, status: 'RELEASED' });
    const unknown = await api.GET('/customers/{customerId}', {
      params: { path: { customerId: 'cus_nope' } },
    });
    expect(unknown.error).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
