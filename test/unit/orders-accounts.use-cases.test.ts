// The orders and accounts use cases on the in-memory event store.
import { ConcurrencyError } from '../../functions/shared/errors';
import { inMemoryCommerce, SAGA_DEADLINE_SECONDS, T0 } from '../support/in-memory-commerce';

const meta = { now: T0, correlationId: 'corr-1' };
const ORDER_ID = 'ord_00000000000000000000000000000abc';
const UNKNOWN_CUSTOMER = 'cus_ffffffffffffffffffffffffffffffff';
const UNKNOWN_PRODUCT = 'prd_ffffffffffffffffffffffffffffffff';

describe('registering a customer', () => {
  it('appends its registration with no read, and answers it', async () => {
    const c = inMemoryCommerce();
    const reads = c.events.calls.newest;
    const customer = await c.accounts.register('cus_1', { name: 'Ada', email: 'ada@example.com' }, meta);
    expect(c.events.calls.newest).toBe(reads);
    expect(customer).toMatchObject({ customerId: 'cus_1', creditLimitCents: 100_000, capturedCents: 0 });
    expect(await c.accounts.customer('cus_1')).toEqual(customer);
  });

  it('a repeat under the same id loses the race, and the registration answers it with the first request’s fingerprint', async () => {
    const c = inMemoryCommerce();
    const input = { name: 'Ada', email: 'ada@example.com' };
    await c.accounts.register('cus_1', input, { ...meta, requestHash: 'first' });
    await expect(
      c.accounts.register('cus_1', input, { ...meta, requestHash: 'second' }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await c.accounts.registration('cus_1')).toMatchObject({
      requestHash: 'first',
      customer: { name: 'Ada' },
    });
    expect(await c.accounts.registration('cus_2')).toBeUndefined();
  });
});

describe('placing an order', () => {
  it('prices the items, sets the deadline and appends OrderPlaced', async () => {
    const c = inMemoryCommerce();
    const customer = await c.customer();
    const product = await c.product(10, 1_250);
    const placement = await c.orders.place(
      ORDER_ID,
      { customerId: customer.customerId, items: [{ productId: product.productId, quantity: 2 }] },
      meta,
    );
    if ('rejection' in placement) throw new Error('expected a placement');
    expect(placement.order).toMatchObject({ orderId: ORDER_ID, status: 'PENDING', totalCents: 2_500 });
    expect(placement.order.deadline).toBe(
      new Date(T0.getTime() + SAGA_DEADLINE_SECONDS * 1000).toISOString(),
    );
    expect(placement.placed.type).toBe('OrderPlaced');
    expect(await c.orders.order(ORDER_ID)).toEqual(placement.order);
  });

  it('refuses unknown customers and products, naming each field, and writes nothing', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(10);
    const placement = await c.orders.place(
      ORDER_ID,
      {
        customerId: UNKNOWN_CUSTOMER,
        items: [
          { productId: product.productId, quantity: 1 },
          { productId: UNKNOWN_PRODUCT, quantity: 1 },
          { productId: 'not-an-id', quantity: 1 },
        ],
      },
      meta,
    );
    expect(placement).toEqual({
      rejection: {
        code: 'UNKNOWN_REFERENCES',
        missing: [
          { field: 'customerId', id: UNKNOWN_CUSTOMER },
          { field: 'items.1.productId', id: UNKNOWN_PRODUCT },
          { field: 'items.2.productId', id: 'not-an-id' },
        ],
      },
    });
    expect(await c.orders.order(ORDER_ID)).toBeUndefined();
  });

  it('reads a customer once: a customer once seen needs no read again', async () => {
    const c = inMemoryCommerce();
    const customer = await c.customer();
    const product = await c.product(10);
    const input = { customerId: customer.customerId, items: [{ productId: product.productId, quantity: 1 }] };
    await c.orders.place('ord_00000000000000000000000000000001', input, meta);
    const reads = c.events.calls.newest;
    await c.orders.place('ord_00000000000000000000000000000002', input, meta);
    // The product is known too (its price never changes): placing again reads nothing.
    expect(c.events.calls.newest).toBe(reads);
  });

  it('answers the placement a repeat of the request is answered from', async () => {
    const c = inMemoryCommerce();
    const customer = await c.customer();
    const product = await c.product(10);
    const input = { customerId: customer.customerId, items: [{ productId: product.productId, quantity: 1 }] };
    await c.orders.place(ORDER_ID, input, { ...meta, requestHash: 'h' });
    expect(await c.orders.placement(ORDER_ID)).toMatchObject({
      requestHash: 'h',
      order: { status: 'PENDING' },
    });
    expect(await c.orders.order('not-an-order-id')).toBeUndefined();
  });
});
