// The order saga's steps as use cases, on the in-memory event store: every
// step's outcomes (proceed, business errors, repeats, races) in milliseconds.
// The same steps run on the local cloud (its DynamoDB engine) in test/integration/saga.test.ts.
import { paymentIdFor } from '../../functions/payments/domain';
import { SagaError } from '../../functions/saga/steps';
import { ConcurrencyError } from '../../functions/shared/errors';
import { at, EXECUTION, inMemoryCommerce, succeeded, T0 } from '../support/in-memory-commerce';

async function failure(attempt: Promise<unknown>): Promise<Error> {
  try {
    await attempt;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the step to fail');
}

/** A customer, a product of `stock` units at 1,000 cents, and an order of `quantity` of it. */
async function anOrder(options: { stock?: number; quantity?: number; creditLimitCents?: number } = {}) {
  const commerce = inMemoryCommerce();
  const customer = await commerce.customer(options.creditLimitCents ?? 10_000);
  const product = await commerce.product(options.stock ?? 10);
  const order = await commerce.placed(customer.customerId, [
    { productId: product.productId, quantity: options.quantity ?? 2 },
  ]);
  return { ...commerce, customerId: customer.customerId, productId: product.productId, order };
}

/** The order's saga run to its confirmation in the saga's one sandbox (`c.saga`), as when it has only one. */
async function settledHere(c: Awaited<ReturnType<typeof anOrder>>) {
  const reserved = await c.saga.reserve(c.order.reserve(), T0);
  if (!reserved.proceed) throw new Error('expected to proceed');
  await c.saga.capture(c.order.capture(reserved.customer), T0);
  await c.saga.confirm(c.order.confirm({ order: reserved.order, shards: reserved.shards }), T0);
}

describe('ReserveStock', () => {
  it('claims the order and takes its stock in one transaction, handing both on', async () => {
    const c = await anOrder();
    const result = await c.saga.reserve(c.order.reserve(), T0);
    if (!result.proceed) throw new Error('expected to proceed');
    expect(result.order.state).toMatchObject({
      status: 'PENDING',
      sagaExecutionArn: EXECUTION,
      heldStock: [[{ shard: 0, quantity: 2 }]],
    });
    expect(result.order.version).toBe(2);
    expect(result.shards).toEqual([
      expect.objectContaining({
        productId: c.productId,
        shard: 0,
        version: 2,
        state: expect.objectContaining({ available: 8, reserved: 2 }),
      }),
    ]);
    expect(await c.stock(c.productId)).toMatchObject({ available: 8, reserved: 2, sold: 0 });
    // The customer, read with the shards, for CapturePayment to start from.
    expect(result.customer).toEqual({
      ...(await c.stores.customers.load(c.customerId)),
      readAt: T0.toISOString(),
    });
    expect(c.reported).toEqual(['started']);
  });

  it('takes a just-placed order as placed, with no read of it, and writes the state a read would give', async () => {
    const c = await anOrder();
    const { orderId } = c.order.reserve();
    const placed = await c.stores.orders.first(orderId);
    const load = jest.spyOn(c.stores.orders, 'load');
    const result = await c.saga.reserve(c.order.reserve(), T0);
    expect(load).not.toHaveBeenCalled();
    load.mockRestore();
    if (!result.proceed) throw new Error('expected to proceed');
    const stored = await c.stores.orders.load(orderId);
    expect(stored).toEqual(result.order);
    expect(stored.state).toEqual({
      ...placed?.state,
      sagaExecutionArn: EXECUTION,
      heldStock: [[{ shard: 0, quantity: 2 }]],
    });
  });

  it('reads the shards of every item at once, not one after another', async () => {
    const commerce = inMemoryCommerce();
    const customer = await commerce.customer(100_000);
    const products = [await commerce.product(10), await commerce.product(10), await commerce.product(10)];
    const order = await commerce.placed(
      customer.customerId,
      products.map(({ productId }) => ({ productId, quantity: 1 })),
    );
    const { shards } = commerce.sagaInventory;
    const load = shards.load.bind(shards);
    let inFlight = 0;
    let mostInFlight = 0;
    jest.spyOn(shards, 'load').mockImplementation(async (id) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return load(id);
    });
    const result = await commerce.saga.reserve(order.reserve(), T0);
    expect(result.proceed).toBe(true);
    expect(mostInFlight).toBe(3);
  });

  it('reads the shard it takes even the next order of a product from: what a sandbox wrote is not taken as current', async () => {
    const c = await anOrder();
    await settledHere(c);
    const reads = jest.spyOn(c.sagaInventory.shards, 'load');
    const next = await c.placed(c.customerId, [{ productId: c.productId, quantity: 3 }]);
    const result = await c.saga.reserve(next.reserve(), T0);
    expect(result.proceed).toBe(true);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await c.stock(c.productId)).toMatchObject({ available: 5, reserved: 3, sold: 2 });
  });

  it('takes the next order of a product from another shard while the last one’s sale is to come: that sale lands at once', async () => {
    const c = await anOrder({ stock: 300, quantity: 1 }); // three shards of 100
    const random = jest.spyOn(Math, 'random').mockReturnValue(0); // the first order reads, and takes, shard 0
    const reads = jest.spyOn(c.sagaInventory.shards, 'load');
    let writes: number;
    try {
      const first = await c.saga.reserve(c.order.reserve(), T0);
      if (!first.proceed) throw new Error('expected to proceed');
      // The next order arrives before the first's ConfirmOrder; it reads the shard it draws (the last)
      // and takes it there.
      random.mockReturnValue(0.99);
      const next = await c.placed(c.customerId, [{ productId: c.productId, quantity: 1 }]);
      reads.mockClear();
      writes = c.events.calls.write;
      expect((await c.saga.reserve(next.reserve(), T0)).proceed).toBe(true);
      await c.saga.capture(c.order.capture(first.customer), T0);
      await c.saga.confirm(c.order.confirm({ order: first.order, shards: first.shards }), T0);
    } finally {
      // Restored even if a step throws, so that no later test draws shards from a fixed Math.random.
      random.mockRestore();
    }
    expect(reads).toHaveBeenCalledTimes(1);
    // The reservation, the capture and the sale, each at its first try.
    expect(c.events.calls.write - writes).toBe(3);
    expect(await c.stock(c.productId)).toMatchObject({ available: 298, reserved: 1, sold: 1 });
  });

  it('a shard whose held stock another sandbox sold: the next order reads it, and nothing fails', async () => {
    const c = await anOrder();
    const reserved = await c.saga.reserve(c.order.reserve(), T0);
    if (!reserved.proceed) throw new Error('expected to proceed');
    // The order's next steps run in another of the saga's sandboxes, which sells the stock held here.
    const elsewhere = c.sagaSandbox();
    await elsewhere.capture(c.order.capture(), T0);
    await elsewhere.confirm(c.order.confirm({ order: reserved.order, shards: reserved.shards }), T0);
    const reads = jest.spyOn(c.sagaInventory.shards, 'load');
    const writes = c.events.calls.write;
    const next = await c.placed(c.customerId, [{ productId: c.productId, quantity: 3 }]);
    const result = await c.saga.reserve(next.reserve(), T0);
    expect(result.proceed).toBe(true);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(c.events.calls.write - writes).toBe(2); // the order placed, and one reservation, not a stale one first
    expect(await c.stock(c.productId)).toMatchObject({ available: 5, reserved: 3, sold: 2 });
  });

  it('a shard another sandbox wrote since: it is read first, so the one write lands and the stock is taken once', async () => {
    const c = await anOrder();
    await settledHere(c);
    // The inventory API (a sandbox of its own) takes a unit of the same, only, shard.
    succeeded(await c.inventory.reserveStock(c.productId, 1, { now: T0, correlationId: 'corr-1' }));
    const reads = jest.spyOn(c.sagaInventory.shards, 'load');
    const writes = c.events.calls.write;
    const next = await c.placed(c.customerId, [{ productId: c.productId, quantity: 3 }]);
    const result = await c.saga.reserve(next.reserve(), T0);
    expect(result.proceed).toBe(true);
    expect(c.events.calls.write - writes).toBe(2); // the order placed, and the reservation: no stale write
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await c.stock(c.productId)).toMatchObject({ available: 4, reserved: 4, sold: 2 });
  });

  it('a customer’s next order of a product, in the sandbox that took the last: reads of the customer and the shard, one transaction', async () => {
    const c = await anOrder();
    await settledHere(c);
    const next = await c.placed(c.customerId, [{ productId: c.productId, quantity: 1 }]);
    const customers = jest.spyOn(c.stores.customers, 'load');
    const shards = jest.spyOn(c.sagaInventory.shards, 'load');
    const orders = jest.spyOn(c.stores.orders, 'load');
    const writes = c.events.calls.write;
    const result = await c.saga.reserve(next.reserve(), at(2));
    expect(result).toMatchObject({ proceed: true, customer: { state: { capturedCents: 2_000 } } });
    // The customer (for CapturePayment to start from) and the shard, every time: no sandbox remembers them.
    // The order is not read: its first attempt takes it as placed.
    expect(customers).toHaveBeenCalledTimes(1);
    expect(shards).toHaveBeenCalledTimes(1);
    expect(orders).not.toHaveBeenCalled();
    expect(c.events.calls.write - writes).toBe(1);
  });

  it('on a retry by the same execution, proceeds with the order as it is and takes nothing more', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    const again = await c.saga.reserve(c.order.reserve(), T0);
    expect(again).toMatchObject({ proceed: true, shards: [], order: { version: 2 } });
    expect(await c.stock(c.productId)).toMatchObject({ available: 8, reserved: 2 });
    expect(c.reported).toEqual(['started']);
  });

  it('another execution stops, having done nothing: its write as if the order were just placed fails, and it reads', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    const writes = c.events.calls.write;
    expect(await c.saga.reserve(c.order.reserve(`${EXECUTION}-bus`), T0)).toEqual({ proceed: false });
    expect(c.events.calls.write).toBe(writes + 1);
    expect(await c.stock(c.productId)).toMatchObject({ available: 8, reserved: 2 });
  });

  it('short of stock: claims the order alone, then fails OutOfStock; another execution then stops', async () => {
    const c = await anOrder({ stock: 1, quantity: 2 });
    const error = await failure(c.saga.reserve(c.order.reserve(), T0));
    expect(error).toBeInstanceOf(SagaError);
    expect(error.name).toBe('OutOfStock');
    expect((await c.orders.order(c.order.reserve().orderId))?.sagaExecutionArn).toBe(EXECUTION);
    expect(await c.saga.reserve(c.order.reserve(`${EXECUTION}-bus`), T0)).toEqual({ proceed: false });
    expect(await c.stock(c.productId)).toMatchObject({ available: 1, reserved: 0 });
  });

  it('past the deadline: fails DeadlineExceeded, writing nothing', async () => {
    const c = await anOrder();
    const error = await failure(c.saga.reserve(c.order.reserve(), at(31)));
    expect(error.name).toBe('DeadlineExceeded');
    expect(await c.stock(c.productId)).toMatchObject({ available: 10, reserved: 0 });
    expect(await c.orders.order(c.order.reserve().orderId)).not.toHaveProperty('sagaExecutionArn');
  });

  it('a final order stops the step', async () => {
    const c = await anOrder();
    await c.saga.cancel(c.order.cancel('TIMEOUT'), T0);
    expect(await c.saga.reserve(c.order.reserve(), T0)).toEqual({ proceed: false });
  });
});

/** The order's customer as ReserveStock would hand it on, read at `at`. */
async function readAt(c: Awaited<ReturnType<typeof anOrder>>, at: Date) {
  return { ...(await c.stores.customers.load(c.customerId)), readAt: at.toISOString() };
}

describe('CapturePayment', () => {
  it('captures the total against the customer’s credit, in one transaction', async () => {
    const c = await anOrder();
    const orderId = c.order.capture().orderId;
    expect(await c.saga.capture(c.order.capture(), T0)).toEqual({ paymentId: paymentIdFor(orderId) });
    expect((await c.stores.payments.load(paymentIdFor(orderId))).state).toMatchObject({
      status: 'CAPTURED',
      amountCents: 2_000,
    });
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(2_000);
  });

  it('starts from the customer ReserveStock handed on, with no read of it', async () => {
    const c = await anOrder();
    const handedOn = await readAt(c, T0);
    const load = jest.spyOn(c.stores.customers, 'load');
    await c.saga.capture(c.order.capture(handedOn), T0);
    expect(load).not.toHaveBeenCalled();
    load.mockRestore();
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(2_000);
  });

  it('a customer handed on that moved since fails its write, and the retry reads it', async () => {
    const c = await anOrder({ creditLimitCents: 3_000 });
    const handedOn = await readAt(c, T0);
    const other = await c.placed(c.customerId, [{ productId: c.productId, quantity: 1 }]);
    await c.sagaSandbox().capture(other.capture(), T0);
    // 1,000 of 3,000 taken since (by another sandbox): the 2,000 still fit, counted from the customer as it now is.
    const writes = c.events.calls.write;
    await c.saga.capture(c.order.capture(handedOn), T0);
    expect(c.events.calls.write - writes).toBe(2); // the stale write, the one that landed
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(3_000);
    const third = await c.placed(c.customerId, [{ productId: c.productId, quantity: 1 }]);
    expect((await failure(c.saga.capture(third.capture(handedOn), T0))).name).toBe('PaymentDeclined');
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(3_000);
  });

  it('a refusal is never decided on the customer handed on, only on a fresh read', async () => {
    const c = await anOrder({ creditLimitCents: 3_000 });
    const other = await c.placed(c.customerId, [{ productId: c.productId, quantity: 2 }]);
    await c.saga.capture(other.capture(), T0);
    const handedOn = await readAt(c, T0);
    // The other order's payment refunded since: the credit handed on (1,000 left) is too little, the real one is not.
    await c.saga.cancel(other.cancel('TIMEOUT'), T0);
    expect(await c.saga.capture(c.order.capture(handedOn), T0)).toEqual({
      paymentId: paymentIdFor(c.order.capture().orderId),
    });
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(2_000);
  });

  it('reads the customer again when the one handed on was read over 250 ms before', async () => {
    const c = await anOrder();
    const handedOn = await readAt(c, new Date(T0.getTime() - 251));
    const load = jest.spyOn(c.stores.customers, 'load');
    await c.saga.capture(c.order.capture(handedOn), T0);
    expect(load).toHaveBeenCalledTimes(1);
    load.mockRestore();
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(2_000);
  });

  it('a customer handed on, moved on by another since: the write fails, the retry reads it, the credit is right', async () => {
    const c = await anOrder({ creditLimitCents: 3_000 });
    const reserved = await c.saga.reserve(c.order.reserve(), T0);
    if (!reserved.proceed) throw new Error('expected to proceed');
    const other = await c.placed(c.customerId, [{ productId: c.productId, quantity: 1 }]);
    await c.sagaSandbox().capture(other.capture(), T0);
    const load = jest.spyOn(c.stores.customers, 'load');
    const writes = c.events.calls.write;
    await c.saga.capture(c.order.capture(reserved.customer), T0);
    expect(c.events.calls.write - writes).toBe(2);
    expect(load).toHaveBeenCalledTimes(1);
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(3_000);
  });

  it('a repeat finds the payment it made and captures nothing more', async () => {
    const c = await anOrder();
    await c.saga.capture(c.order.capture(), T0);
    expect(await c.saga.capture(c.order.capture(), T0)).toEqual({
      paymentId: paymentIdFor(c.order.capture().orderId),
    });
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(2_000);
  });

  it('over the available credit: writes the payment declined, then fails PaymentDeclined', async () => {
    const c = await anOrder({ creditLimitCents: 1_999 });
    const error = await failure(c.saga.capture(c.order.capture(), T0));
    expect(error.name).toBe('PaymentDeclined');
    expect((await c.stores.payments.load(paymentIdFor(c.order.capture().orderId))).state?.status).toBe(
      'DECLINED',
    );
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(0);
    // A repeat of the declined capture declines again, from the payment.
    expect((await failure(c.saga.capture(c.order.capture(), T0))).message).toMatch(/is DECLINED/);
  });

  it('a payment voided by compensation cannot be captured after', async () => {
    const c = await anOrder();
    await c.saga.cancel(c.order.cancel('TIMEOUT'), T0);
    const error = await failure(c.saga.capture(c.order.capture(), T0));
    expect(error.name).toBe('PaymentDeclined');
    expect(error.message).toMatch(/is VOIDED/);
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(0);
  });

  it('an unknown customer declines, writing nothing', async () => {
    const c = await anOrder();
    const input = { ...c.order.capture(), customerId: 'cus_ffffffffffffffffffffffffffffffff' };
    const error = await failure(c.saga.capture(input, T0));
    expect(error.message).toMatch(/does not exist/);
    expect((await c.stores.payments.load(paymentIdFor(input.orderId))).state).toBeNull();
  });

  it('past the deadline: fails DeadlineExceeded, writing nothing', async () => {
    const c = await anOrder();
    expect((await failure(c.saga.capture(c.order.capture(), at(31)))).name).toBe('DeadlineExceeded');
    expect((await c.stores.payments.load(paymentIdFor(c.order.capture().orderId))).state).toBeNull();
  });

  it('concurrent orders of one customer never together exceed the limit', async () => {
    const c = inMemoryCommerce();
    const customer = await c.customer(3_000);
    const product = await c.product(10);
    const orders = await Promise.all(
      [0, 1, 2].map(() => c.placed(customer.customerId, [{ productId: product.productId, quantity: 2 }])),
    );
    const results = await Promise.allSettled(orders.map((o) => c.saga.capture(o.capture(), T0)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await c.accounts.customer(customer.customerId))?.capturedCents).toBe(2_000);
  });
});

describe('ConfirmOrder', () => {
  it('confirms the order and sells its stock, from what ReserveStock handed on, with no read of the order', async () => {
    const c = await anOrder();
    const reserved = await c.saga.reserve(c.order.reserve(), T0);
    if (!reserved.proceed) throw new Error('expected to proceed');
    await c.saga.capture(c.order.capture(), T0);
    const reads = c.events.calls.newest;
    expect(
      await c.saga.confirm(c.order.confirm({ order: reserved.order, shards: reserved.shards }), T0),
    ).toEqual({
      status: 'CONFIRMED',
    });
    expect(c.events.calls.newest).toBe(reads);
    expect(await c.orders.order(c.order.confirm().orderId)).toMatchObject({
      status: 'CONFIRMED',
      paymentId: paymentIdFor(c.order.confirm().orderId),
    });
    expect(await c.stock(c.productId)).toMatchObject({ available: 8, reserved: 0, sold: 2 });
    expect(c.reported).toEqual(['started', `confirmed ${c.order.confirm().orderId}`]);
  });

  it('a repeat answers CONFIRMED and sells nothing more', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    await c.saga.confirm(c.order.confirm(), T0);
    expect(await c.saga.confirm(c.order.confirm(), at(60))).toEqual({ status: 'CONFIRMED' });
    expect(await c.stock(c.productId)).toMatchObject({ sold: 2, reserved: 0 });
  });

  it('a cancelled order fails ConfirmationFailed', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    await c.saga.cancel(c.order.cancel('PAYMENT_DECLINED'), T0);
    const error = await failure(c.saga.confirm(c.order.confirm(), T0));
    expect(error.name).toBe('ConfirmationFailed');
    expect(error.message).toMatch(/is CANCELLED/);
  });

  it('an order that holds no stock fails ConfirmationFailed', async () => {
    const c = await anOrder();
    const error = await failure(c.saga.confirm(c.order.confirm(), T0));
    expect(error.name).toBe('ConfirmationFailed');
    expect(error.message).toMatch(/holds no stock/);
  });

  it('past the deadline: fails DeadlineExceeded, writing nothing', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    expect((await failure(c.saga.confirm(c.order.confirm(), at(31)))).name).toBe('DeadlineExceeded');
    expect(await c.stock(c.productId)).toMatchObject({ reserved: 2, sold: 0 });
  });

  it('with a stale order handed on (cancelled meanwhile), its write fails, and the retry reads and refuses', async () => {
    const c = await anOrder();
    const reserved = await c.saga.reserve(c.order.reserve(), T0);
    if (!reserved.proceed) throw new Error('expected to proceed');
    await c.saga.cancel(c.order.cancel('TIMEOUT'), T0);
    const writes = c.events.calls.write;
    const error = await failure(
      c.saga.confirm(c.order.confirm({ order: reserved.order, shards: reserved.shards }), T0),
    );
    expect(error.name).toBe('ConfirmationFailed');
    expect(c.events.calls.write).toBe(writes + 1);
    expect(await c.stock(c.productId)).toMatchObject({ available: 10, reserved: 0, sold: 0 });
  });
});

describe('CancelOrder (compensation) and the sweeper', () => {
  it('cancels, gives the stock back, refunds the payment and the credit, in one transaction', async () => {
    const c = await anOrder();
    const orderId = c.order.cancel('CONFIRMATION_FAILED').orderId;
    await c.saga.reserve(c.order.reserve(), T0);
    await c.saga.capture(c.order.capture(), T0);
    const writes = c.events.calls.write;
    expect(await c.saga.cancel(c.order.cancel('CONFIRMATION_FAILED'), T0)).toEqual({
      cancelled: true,
      reason: 'CONFIRMATION_FAILED',
    });
    expect(c.events.calls.write).toBe(writes + 1);
    expect(await c.orders.order(orderId)).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'CONFIRMATION_FAILED',
      paymentId: paymentIdFor(orderId),
    });
    expect(await c.stock(c.productId)).toMatchObject({ available: 10, reserved: 0 });
    expect((await c.stores.payments.load(paymentIdFor(orderId))).state?.status).toBe('REFUNDED');
    expect((await c.accounts.customer(c.customerId))?.capturedCents).toBe(0);
    expect(c.reported).toContain(`cancelled ${orderId} CONFIRMATION_FAILED`);
  });

  it('with no payment taken: voids it, and the order names none', async () => {
    const c = await anOrder();
    const orderId = c.order.cancel('OUT_OF_STOCK').orderId;
    await c.saga.cancel(c.order.cancel('OUT_OF_STOCK'), T0);
    expect(await c.orders.order(orderId)).not.toHaveProperty('paymentId');
    expect((await c.stores.payments.load(paymentIdFor(orderId))).state?.status).toBe('VOIDED');
  });

  it('with a declined payment: names it, refunds nothing', async () => {
    const c = await anOrder({ creditLimitCents: 100 });
    const orderId = c.order.cancel('PAYMENT_DECLINED').orderId;
    await failure(c.saga.capture(c.order.capture(), T0));
    await c.saga.cancel(c.order.cancel('PAYMENT_DECLINED'), T0);
    expect(await c.orders.order(orderId)).toMatchObject({
      status: 'CANCELLED',
      paymentId: paymentIdFor(orderId),
    });
    expect((await c.stores.payments.load(paymentIdFor(orderId))).state?.status).toBe('DECLINED');
  });

  it('an execution that lost the claim leaves the owner’s order alone', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    expect(await c.saga.cancel(c.order.cancel('STEP_FAILED', `${EXECUTION}-bus`), T0)).toEqual({
      cancelled: false,
      reason: 'STEP_FAILED',
    });
    expect((await c.orders.order(c.order.cancel('TIMEOUT').orderId))?.status).toBe('PENDING');
  });

  it('a final order is left as it is', async () => {
    const c = await anOrder();
    await c.saga.reserve(c.order.reserve(), T0);
    await c.saga.confirm(c.order.confirm(), T0);
    expect(await c.saga.cancel(c.order.cancel('TIMEOUT'), T0)).toEqual({
      cancelled: false,
      reason: 'TIMEOUT',
    });
    expect(await c.stock(c.productId)).toMatchObject({ sold: 2 });
  });

  it('the sweeper cancels whatever execution owns the order, with TIMEOUT', async () => {
    const c = await anOrder();
    const orderId = c.order.cancel('TIMEOUT').orderId;
    await c.saga.reserve(c.order.reserve(), T0);
    expect(await c.saga.cancelOrder(orderId, 'TIMEOUT', { now: at(40) })).toMatchObject({
      status: 'PENDING',
    });
    expect(await c.orders.order(orderId)).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'TIMEOUT',
    });
    expect(await c.stock(c.productId)).toMatchObject({ available: 10, reserved: 0 });
  });

  it('a cancellation and a confirmation racing: exactly one lands', async () => {
    const c = await anOrder();
    const reserved = await c.saga.reserve(c.order.reserve(), T0);
    if (!reserved.proceed) throw new Error('expected to proceed');
    const results = await Promise.allSettled([
      c.saga.confirm(c.order.confirm({ order: reserved.order, shards: reserved.shards }), T0),
      c.saga.cancel(c.order.cancel('TIMEOUT'), T0),
    ]);
    const order = await c.orders.order(c.order.confirm().orderId);
    const stock = await c.stock(c.productId);
    if (order?.status === 'CONFIRMED') {
      expect(results[1]).toEqual({ status: 'fulfilled', value: { cancelled: false, reason: 'TIMEOUT' } });
      expect(stock).toMatchObject({ sold: 2, reserved: 0, available: 8 });
    } else {
      expect(order?.status).toBe('CANCELLED');
      expect(results[0]).toMatchObject({ status: 'rejected' });
      expect(stock).toMatchObject({ sold: 0, reserved: 0, available: 10 });
    }
  });
});

describe('the in-memory store under the steps', () => {
  it('is the one the steps write to: a lost race is a ConcurrencyError, as on DynamoDB', async () => {
    const c = await anOrder();
    const { orders } = c.stores;
    const orderId = c.order.reserve().orderId;
    const loaded = await orders.load(orderId);
    const error = await failure(c.events.write([orders.unchanged(orderId, loaded.version - 1)]));
    expect(error).toBeInstanceOf(ConcurrencyError);
  });
});
