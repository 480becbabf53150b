// Pure decider tests for the orders domain: given events (folded), when a
// command, then the events it decides and the state they fold to.
import {
  beginSaga,
  type CancellationReason,
  cancel,
  confirm,
  FINAL_FROM_VERSION,
  type Order,
  type OrderEvent,
  type OrderItem,
  type OrderState,
  orderFold,
  orderView,
  place,
  reserveStock,
} from '../../functions/orders/domain';
import { foldEvents } from '../../functions/shared/events';

const T0 = new Date('2025-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const ORDER_ID = 'ord_0123456789abcdef0123456789abcdef';
const CUSTOMER_ID = 'cus_0123456789abcdef0123456789abcdef';
const PAYMENT_ID = 'pay_0123456789abcdef0123456789abcdef';

const given = (...events: OrderEvent[]): OrderState => foldEvents(orderFold, orderFold.initial, events);

const ITEMS: OrderItem[] = [
  { productId: 'prd_a', quantity: 2, priceCents: 1_250 },
  { productId: 'prd_b', quantity: 1, priceCents: 999 },
];

const orderPlaced: OrderEvent = {
  type: 'OrderPlaced',
  schemaVersion: 1,
  data: {
    orderId: ORDER_ID,
    customerId: CUSTOMER_ID,
    items: ITEMS,
    totalCents: 3_499,
    deadline: at(30).toISOString(),
    placedAt: T0.toISOString(),
  },
};
const EXECUTION = 'arn:aws:states:us-east-1:000000000000:execution:saga:first';
const sagaStarted = (executionArn = EXECUTION): OrderEvent => ({
  type: 'OrderSagaStarted',
  schemaVersion: 1,
  data: { orderId: ORDER_ID, executionArn },
});
const orderConfirmed: OrderEvent = {
  type: 'OrderConfirmed',
  schemaVersion: 1,
  data: { orderId: ORDER_ID, paymentId: PAYMENT_ID, confirmedAt: at(5).toISOString() },
};
const orderCancelled = (reason: CancellationReason, paymentId?: string): OrderEvent => ({
  type: 'OrderCancelled',
  schemaVersion: 1,
  data: { orderId: ORDER_ID, reason, ...(paymentId ? { paymentId } : {}), cancelledAt: at(6).toISOString() },
});

function existing(state: OrderState): Order {
  if (!state) throw new Error('expected an order');
  return state;
}

const pending = () => existing(given(orderPlaced));
const confirmed = () => existing(given(orderPlaced, orderConfirmed));
const cancelled = () => existing(given(orderPlaced, orderCancelled('OUT_OF_STOCK')));

describe('orders domain', () => {
  describe('evolve', () => {
    it('starts with no order', () => {
      expect(given()).toBeNull();
    });

    it('OrderPlaced creates a pending order', () => {
      expect(given(orderPlaced)).toEqual({
        orderId: ORDER_ID,
        customerId: CUSTOMER_ID,
        items: ITEMS,
        totalCents: 3_499,
        status: 'PENDING',
        deadline: at(30).toISOString(),
        createdAt: T0.toISOString(),
        updatedAt: T0.toISOString(),
      });
    });

    it('OrderSagaStarted records the execution that owns the saga', () => {
      expect(given(orderPlaced, sagaStarted())).toEqual({ ...pending(), sagaExecutionArn: EXECUTION });
    });

    it('OrderConfirmed confirms with the payment', () => {
      expect(given(orderPlaced, orderConfirmed)).toEqual({
        ...pending(),
        status: 'CONFIRMED',
        paymentId: PAYMENT_ID,
        updatedAt: at(5).toISOString(),
      });
    });

    it('OrderCancelled cancels with its reason', () => {
      expect(given(orderPlaced, orderCancelled('TIMEOUT'))).toEqual({
        ...pending(),
        status: 'CANCELLED',
        cancellationReason: 'TIMEOUT',
        updatedAt: at(6).toISOString(),
      });
    });

    it('OrderCancelled keeps the payment it names (to be refunded)', () => {
      const order = existing(given(orderPlaced, orderCancelled('CONFIRMATION_FAILED', PAYMENT_ID)));
      expect(order.paymentId).toBe(PAYMENT_ID);
      expect(order.cancellationReason).toBe('CONFIRMATION_FAILED');
    });

    it('confirmation or cancellation of no order leaves none', () => {
      expect(given(sagaStarted())).toBeNull();
      expect(given(orderConfirmed)).toBeNull();
      expect(given(orderCancelled('TIMEOUT'))).toBeNull();
    });
  });

  describe('place', () => {
    const command = (items: { productId: string; quantity: number }[], prices: [string, number][]) => ({
      orderId: ORDER_ID,
      customerId: CUSTOMER_ID,
      items,
      prices: new Map(prices),
      sagaDeadlineSeconds: 30,
      now: T0,
    });

    it('decides OrderPlaced with each item priced and the deadline after the saga timeout', () => {
      const events = place(
        command(
          [
            { productId: 'prd_a', quantity: 2 },
            { productId: 'prd_b', quantity: 1 },
          ],
          [
            ['prd_a', 1_250],
            ['prd_b', 999],
          ],
        ),
      );
      expect(events).toEqual([orderPlaced]);
    });

    it('totals sum(price x quantity) over the items', () => {
      const items = [
        { productId: 'prd_a', quantity: 3 },
        { productId: 'prd_b', quantity: 7 },
        { productId: 'prd_c', quantity: 1 },
      ];
      const prices: [string, number][] = [
        ['prd_a', 333],
        ['prd_b', 1_001],
        ['prd_c', 0],
      ];
      const [event] = place(command(items, prices));
      if (event?.type !== 'OrderPlaced') throw new Error('expected OrderPlaced');
      expect(event.data.totalCents).toBe(3 * 333 + 7 * 1_001 + 1 * 0);
      expect(event.data.items.map((i) => i.priceCents)).toEqual([333, 1_001, 0]);
      expect(existing(given(event)).totalCents).toBe(8_006);
    });

    it('a repeated product counts each line', () => {
      const [event] = place(
        command(
          [
            { productId: 'prd_a', quantity: 1 },
            { productId: 'prd_a', quantity: 2 },
          ],
          [['prd_a', 500]],
        ),
      );
      expect(existing(given(event!)).totalCents).toBe(1_500);
    });
  });

  describe('beginSaga', () => {
    it('the first execution claims a pending order and proceeds', () => {
      expect(beginSaga(pending(), EXECUTION)).toEqual({ proceed: true, events: [sagaStarted()] });
    });

    it('the same execution on a retry proceeds and decides nothing', () => {
      const claimed = existing(given(orderPlaced, sagaStarted()));
      expect(beginSaga(claimed, EXECUTION)).toEqual({ proceed: true, events: [] });
    });

    it('another execution of a claimed order stops', () => {
      const claimed = existing(given(orderPlaced, sagaStarted()));
      expect(beginSaga(claimed, `${EXECUTION}-duplicate`)).toEqual({ proceed: false, events: [] });
    });

    it('any execution of a confirmed or cancelled order stops', () => {
      for (const order of [confirmed(), cancelled()]) {
        expect(beginSaga(order, EXECUTION)).toEqual({ proceed: false, events: [] });
      }
      const claimedThenCancelled = existing(given(orderPlaced, sagaStarted(), orderCancelled('TIMEOUT')));
      expect(beginSaga(claimedThenCancelled, EXECUTION)).toEqual({ proceed: false, events: [] });
    });
  });

  describe('reserveStock', () => {
    const HELD = [
      [{ shard: 0, quantity: 2 }],
      [
        { shard: 1, quantity: 1 },
        { shard: 3, quantity: 0 },
      ],
    ];
    const stockReserved = (executionArn = EXECUTION): OrderEvent => ({
      type: 'OrderStockReserved',
      schemaVersion: 1,
      data: { orderId: ORDER_ID, executionArn, parts: HELD },
    });

    it('claims a pending order for the execution and records the stock it holds, in one event', () => {
      expect(reserveStock(pending(), EXECUTION, HELD)).toEqual([stockReserved()]);
      expect(given(orderPlaced, stockReserved())).toMatchObject({
        status: 'PENDING',
        sagaExecutionArn: EXECUTION,
        heldStock: HELD,
      });
    });

    it('the execution that claimed it alone (out of stock before) may still reserve', () => {
      const claimed = existing(given(orderPlaced, sagaStarted()));
      expect(reserveStock(claimed, EXECUTION, HELD)).toEqual([stockReserved()]);
      expect(reserveStock(claimed, `${EXECUTION}-other`, HELD)).toBe('CANNOT_RESERVE');
    });

    it('refuses an order that holds stock already, or is final', () => {
      const holding = existing(given(orderPlaced, stockReserved()));
      for (const order of [holding, confirmed(), cancelled()]) {
        expect(reserveStock(order, EXECUTION, HELD)).toBe('CANNOT_RESERVE');
      }
    });

    it('a confirmed or cancelled order holds no stock any more', () => {
      expect(given(orderPlaced, stockReserved(), orderConfirmed)).not.toHaveProperty('heldStock');
      expect(given(orderPlaced, stockReserved(), orderCancelled('TIMEOUT'))).not.toHaveProperty('heldStock');
    });

    it(`an order with an event at version ${FINAL_FROM_VERSION} is final, whatever its path`, () => {
      // Every decision refuses a final order, so its events never pass the final one.
      const paths: OrderEvent[][] = [
        [orderPlaced, stockReserved(), orderConfirmed],
        [orderPlaced, stockReserved(), orderCancelled('PAYMENT_DECLINED')],
        [orderPlaced, sagaStarted(), orderCancelled('OUT_OF_STOCK')],
      ];
      for (const events of paths) {
        const order = existing(given(...events.slice(0, FINAL_FROM_VERSION)));
        expect(order.status).not.toBe('PENDING');
        expect(beginSaga(order, EXECUTION).events).toEqual([]);
        expect(reserveStock(order, EXECUTION, HELD)).toBe('CANNOT_RESERVE');
        expect(cancel(order, 'TIMEOUT', at(9))).toEqual([]);
        expect(confirm(order, PAYMENT_ID, at(9))).not.toEqual(expect.arrayContaining([expect.anything()]));
      }
    });
  });

  describe('confirm', () => {
    it('confirms a pending order', () => {
      expect(confirm(pending(), PAYMENT_ID, at(5))).toEqual([orderConfirmed]);
    });

    it('decides nothing for an order already confirmed (idempotent)', () => {
      expect(confirm(confirmed(), PAYMENT_ID, at(9))).toEqual([]);
    });

    it('refuses a cancelled order', () => {
      expect(confirm(cancelled(), PAYMENT_ID, at(9))).toBe('CANNOT_CONFIRM');
    });
  });

  describe('cancel', () => {
    it.each(['OUT_OF_STOCK', 'PAYMENT_DECLINED', 'CONFIRMATION_FAILED', 'TIMEOUT'] as const)(
      'cancels a pending order with reason %s',
      (reason) => {
        expect(cancel(pending(), reason, at(6))).toEqual([orderCancelled(reason)]);
      },
    );

    it('names the payment when one is given', () => {
      expect(cancel(pending(), 'CONFIRMATION_FAILED', at(6), PAYMENT_ID)).toEqual([
        orderCancelled('CONFIRMATION_FAILED', PAYMENT_ID),
      ]);
    });

    it('leaves a confirmed order as it is', () => {
      expect(cancel(confirmed(), 'TIMEOUT', at(60))).toEqual([]);
    });

    it('decides nothing for an order already cancelled (idempotent)', () => {
      expect(cancel(cancelled(), 'TIMEOUT', at(60))).toEqual([]);
    });
  });

  describe('orderView', () => {
    it('shows a pending order without cancellation or payment', () => {
      const view = orderView(pending());
      expect(view).toEqual({
        orderId: ORDER_ID,
        customerId: CUSTOMER_ID,
        items: ITEMS,
        totalCents: 3_499,
        status: 'PENDING',
        createdAt: T0.toISOString(),
        updatedAt: T0.toISOString(),
      });
    });

    it('shows the payment of a confirmed order and the reason of a cancelled one', () => {
      expect(orderView(confirmed())).toMatchObject({ status: 'CONFIRMED', paymentId: PAYMENT_ID });
      expect(orderView(cancelled())).toMatchObject({
        status: 'CANCELLED',
        cancellationReason: 'OUT_OF_STOCK',
      });
      expect(orderView(cancelled())).not.toHaveProperty('paymentId');
    });
  });
});
