// Reads by id come from the event store (a consistent query of the aggregate's
// newest item), so a read sent right after a write's answer always sees it:
// no projector stands between them.
import { createCustomer, createProduct, get, type OrderView, placeAndSettle, post } from '../support/api';

const ROUNDS = 20;

test('a customer is readable, as created, right after POST /customers answers', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    const created = await post<{ customerId: string }>('/customers', {
      name: `Reader ${i}`,
      email: `reader${i}@example.com`,
      creditLimitCents: 1_000 + i,
    });
    expect(created.status).toBe(201);
    const read = await get(`/customers/${created.body.customerId}`);
    expect(read).toMatchObject({ status: 200, body: created.body });
  }
});

test('an order is readable right after POST /orders answers, with what was placed', async () => {
  const customer = await createCustomer({ creditLimitCents: 1_000_000 });
  const product = await createProduct({ stock: 1_000, priceCents: 300 });
  for (let i = 0; i < ROUNDS; i++) {
    const items = [{ productId: product.productId, quantity: 1 + (i % 3) }];
    const placed = await post<{ orderId: string; totalCents: number }>('/orders', {
      customerId: customer.customerId,
      items,
    });
    expect(placed.status).toBe(202);
    const read = await get<OrderView & { items: unknown[] }>(`/orders/${placed.body.orderId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      orderId: placed.body.orderId,
      totalCents: placed.body.totalCents,
      items: [{ ...items[0], priceCents: 300 }],
    });
  }
});

test("a confirmed order's payment is readable the moment the order reads CONFIRMED", async () => {
  const customer = await createCustomer({ creditLimitCents: 1_000_000 });
  const product = await createProduct({ stock: 100, priceCents: 700 });
  for (let i = 0; i < 5; i++) {
    const order = await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 1 }]);
    expect(order.status).toBe('CONFIRMED');
    const payment = await get(`/payments/${order.paymentId}`);
    expect(payment).toMatchObject({ status: 200, body: { status: 'CAPTURED', amountCents: 700 } });
  }
});
