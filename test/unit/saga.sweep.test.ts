// The saga sweeper's use case (functions/saga/sweep.ts) with the saga's real cancellation on the
// in-memory stores: one order whose cancellation fails never keeps the others PENDING, and is
// cancelled by a later sweep of its window. The handler's DynamoDB query is modelled by `openIn`
// below (the placed-orders index by deadline, less the orders with an event at FINAL_FROM_VERSION).
import { FINAL_FROM_VERSION } from '../../functions/orders/domain';
import { type LostSagaSweep, sweepLostSagas, sweepWindow } from '../../functions/saga/sweep';
import type { PendingAppend } from '../../functions/shared/event-store';
import { at, inMemoryCommerce, SAGA_DEADLINE_SECONDS, T0 } from '../support/in-memory-commerce';

const GRACE_MS = 60_000;
const MINUTE = 60_000;

/** An error as the SDK throws one after its retries: a throttle, by its name. */
const throttled = () =>
  Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
    name: 'ThrottlingException',
  });

/**
 * `count` orders of one customer, each of 2 units of one product, their stock reserved and their
 * payment captured (stock and credit held), whose sagas then stopped: only the sweeper can end them.
 * `failOnce`: the orders whose first cancellation write throws.
 */
async function lostSagas(count: number) {
  const c = inMemoryCommerce();
  const customer = await c.customer(100_000);
  const product = await c.product(100);
  const orders: { orderId: string; deadline: string }[] = [];
  for (let i = 0; i < count; i++) {
    const order = await c.placed(customer.customerId, [{ productId: product.productId, quantity: 2 }]);
    const reserved = await c.saga.reserve(order.reserve(), T0);
    if (!reserved.proceed) throw new Error('expected to proceed');
    await c.saga.capture(order.capture(reserved.customer), T0);
    orders.push({ orderId: order.reserve().orderId, deadline: order.reserve().deadline });
  }
  // The store fails the cancellation of these orders once each, as DynamoDB throttling past the SDK's retries.
  const failOnce = new Set<string>();
  const write = c.events.write.bind(c.events);
  c.events.write = async (appends: readonly PendingAppend[]) => {
    const failing = appends.find((a) => failOnce.has(a.aggregateId));
    if (failing) {
      failOnce.delete(failing.aggregateId);
      throw throttled();
    }
    return write(appends);
  };

  /** The sweep's query at `scheduledAt`: orders whose deadline is in its window, less those already final. */
  const openIn = async (scheduledAt: Date) => {
    const { from, upTo } = sweepWindow(scheduledAt, GRACE_MS);
    const inWindow = orders.filter((o) => o.deadline >= from && o.deadline <= upTo);
    const open: string[] = [];
    for (const { orderId } of inWindow) {
      if (!(await c.events.at('orders', orderId, FINAL_FROM_VERSION))) open.push(orderId);
    }
    return open;
  };
  /** One sweep scheduled at `scheduledAt`, as the handler runs it (cancelling with TIMEOUT, the clock's now). */
  const sweep = (scheduledAt: Date, options: Partial<LostSagaSweep> = {}) =>
    sweepLostSagas({
      open: () => openIn(scheduledAt),
      cancel: async (orderId) =>
        (await c.saga.cancelOrder(orderId, 'TIMEOUT', { now: scheduledAt, correlationId: orderId })) !==
        undefined,
      stopAt: Number.POSITIVE_INFINITY,
      ...options,
    });
  const status = async (orderId: string) => (await c.orders.order(orderId))?.status;
  const credit = async () => (await c.accounts.customer(customer.customerId))?.capturedCents;
  return { c, orders, failOnce, openIn, sweep, status, credit, productId: product.productId };
}

/** The deadline of the orders placed at T0, plus the grace, plus `ms`: when a sweep looks at them. */
const pastGrace = (ms: number) => at(SAGA_DEADLINE_SECONDS + GRACE_MS / 1000 + ms / 1000);

describe('the saga sweeper', () => {
  test('one order whose cancellation fails: the others are cancelled in the same sweep, it in the next', async () => {
    const s = await lostSagas(3);
    const [a, b, c] = s.orders.map((o) => o.orderId) as [string, string, string];
    expect(await s.c.stock(s.productId)).toMatchObject({ available: 94, reserved: 6 });
    expect(await s.credit()).toBe(6_000);
    s.failOnce.add(b);

    const first = await s.sweep(pastGrace(10_000));
    expect(first).toEqual({
      cancelled: [a, c],
      failed: [{ orderId: b, error: 'ThrottlingException' }],
      left: [],
      complete: false,
    });
    expect([await s.status(a), await s.status(b), await s.status(c)]).toEqual([
      'CANCELLED',
      'PENDING',
      'CANCELLED',
    ]);
    // What the failed order holds, it holds still.
    expect(await s.c.stock(s.productId)).toMatchObject({ available: 98, reserved: 2 });
    expect(await s.credit()).toBe(2_000);

    // The next scheduled sweep (a minute later) still finds it, and it alone, and cancels it.
    expect(await s.openIn(pastGrace(10_000 + MINUTE))).toEqual([b]);
    const next = await s.sweep(pastGrace(10_000 + MINUTE));
    expect(next).toEqual({ cancelled: [b], failed: [], left: [], complete: true });
    expect(await s.c.orders.order(b)).toMatchObject({ status: 'CANCELLED', cancellationReason: 'TIMEOUT' });
    expect(await s.c.stock(s.productId)).toMatchObject({ available: 100, reserved: 0, sold: 0 });
    expect(await s.credit()).toBe(0);
    // Nothing is left for a sweep after it.
    expect(await s.openIn(pastGrace(10_000 + MINUTE))).toEqual([]);
  });

  test('an order failing in the last sweep whose window holds it is cancelled by that sweep’s retry', async () => {
    const s = await lostSagas(1);
    const [a] = s.orders.map((o) => o.orderId) as [string];
    s.failOnce.add(a);
    // The last scheduled sweep whose window still holds the order's deadline (its window's oldest minute)…
    const last = pastGrace(MINUTE + 30_000);
    expect((await s.sweep(last)).complete).toBe(false);
    // …so the next scheduled one no longer looks at it: the sweeper fails its invocation instead, and
    // Lambda retries the same scheduled event, whose window is the same.
    expect(await s.openIn(new Date(last.getTime() + MINUTE))).toEqual([]);
    const retried = await s.sweep(last);
    expect(retried).toEqual({ cancelled: [a], failed: [], left: [], complete: true });
    expect(await s.status(a)).toBe('CANCELLED');
    expect(await s.credit()).toBe(0);
  });

  test('a sweep out of time begins no more cancellations, and says the window is not done', async () => {
    const s = await lostSagas(3);
    let now = 0;
    const outcome = await s.sweep(pastGrace(10_000), {
      // Each cancellation takes 1 ms of the clock; the sweep stops beginning them at 2 ms.
      clock: () => now,
      stopAt: 2,
      cancel: async (orderId) => {
        now++;
        return (await s.c.saga.cancelOrder(orderId, 'TIMEOUT', { now: pastGrace(10_000) })) !== undefined;
      },
    });
    const ids = s.orders.map((o) => o.orderId);
    expect(outcome).toEqual({ cancelled: ids.slice(0, 2), failed: [], left: ids.slice(2), complete: false });
    expect(await s.openIn(pastGrace(10_000))).toEqual(ids.slice(2));
  });

  test('an order its saga finished meanwhile is not cancelled, nor counted', async () => {
    const s = await lostSagas(2);
    const [a, b] = s.orders.map((o) => o.orderId) as [string, string];
    // The sweep found both open, but `a` was cancelled by its own saga before the sweeper reached it.
    const outcome = await s.sweep(pastGrace(10_000), {
      open: async () => {
        const open = await s.openIn(pastGrace(10_000));
        await s.c.saga.cancelOrder(a, 'PAYMENT_DECLINED', { now: T0 });
        return open;
      },
    });
    expect(outcome).toEqual({ cancelled: [b], failed: [], left: [], complete: true });
    expect(await s.c.orders.order(a)).toMatchObject({ cancellationReason: 'PAYMENT_DECLINED' });
  });
});
