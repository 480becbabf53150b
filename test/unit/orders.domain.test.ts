// Pure decider tests for the orders domain: given events (folded), when a
// command, then the events it decides and the state they fold to.
import {
  type CancellationReason,
  FINAL_FROM_VERSION,
  type Order,
  type OrderCommand,
  type OrderEvent,
  type OrderItem,
  type OrderState,
  orderDecider,
} from '../../functions/orders/domain';
import { orderView } from '../../functions/orders/http-views';
import { deciderSpec } from '../support/decider-spec';

const T0 = new Date('2025-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const ORDER_ID = 'ord_0123456789abcdef0123456789abcdef';
const CUSTOMER_ID = 'cus_0123456789abcdef0123456789abcdef';
const PAYMENT_ID = 'pay_0123456789abcdef0123456789abcdef';

const spec = deciderSpec(orderDecider);
const given = (...events: OrderEvent[]): OrderState => spec.given(...events).state;

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

const claim = (executionArn = EXECUTION): OrderCommand => ({ type: 'ClaimSaga', executionArn });
const reserve = (executionArn = EXECUTION): OrderCommand => ({
  type: 'ReserveStock',
  executionArn,
  parts: HELD,
});
const confirm = (now = at(5)): OrderCommand => ({ type: 'Confirm', paymentId: PAYMENT_ID, now });
const cancel = (
  reason: CancellationReason,
  now = at(6),
  extra: { by?: string; paymentId?: string } = {},
): OrderCommand => ({
  type: 'Cancel',
  reason,
  now,
  ...extra,
});
const FINAL = { code: 'ORDER_FINAL' } as const;

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
      expect(given(orderPlaced, orderCancelled('CONFIRMATION_FAILED', PAYMENT_ID))).toMatchObject({
        status: 'CANCELLED',
        paymentId: PAYMENT_ID,
        cancellationReason: 'CONFIRMATION_FAILED',
      });
    });

    it('confirmation or cancellation of no order leaves none', () => {
      expect(given(sagaStarted())).toBeNull();
      expect(given(orderConfirmed)).toBeNull();
      expect(given(orderCancelled('TIMEOUT'))).toBeNull();
    });
  });

  describe('place', () => {
    const command = (
      items: { productId: string; quantity: number }[],
      prices: [string, number][],
    ): OrderCommand => ({
      type: 'Place',
      orderId: ORDER_ID,
      customerId: CUSTOMER_ID,
      items,
      prices: new Map(prices),
      sagaDeadlineSeconds: 30,
      now: T0,
    });
    const placedBy = (c: OrderCommand): OrderEvent => {
      const decision = spec.given().when(c).decision;
      if (!('events' in decision) || decision.events[0]?.type !== 'OrderPlaced')
        throw new Error('expected OrderPlaced');
      return decision.events[0];
    };

    it('decides OrderPlaced with each item priced and the deadline after the saga timeout', () => {
      spec
        .given()
        .when(
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
        )
        .thenDecides([orderPlaced]);
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
      const event = placedBy(command(items, prices));
      if (event.type !== 'OrderPlaced') throw new Error('expected OrderPlaced');
      expect(event.data.totalCents).toBe(3 * 333 + 7 * 1_001 + 1 * 0);
      expect(event.data.items.map((i) => i.priceCents)).toEqual([333, 1_001, 0]);
      expect(existing(given(event)).totalCents).toBe(8_006);
    });

    it('a repeated product counts each line', () => {
      const event = placedBy(
        command(
          [
            { productId: 'prd_a', quantity: 1 },
            { productId: 'prd_a', quantity: 2 },
          ],
          [['prd_a', 500]],
        ),
      );
      expect(existing(given(event)).totalCents).toBe(1_500);
    });

    it('refuses an order placed already', () => {
      spec.given(orderPlaced).when(command([], [])).thenRejects({ code: 'ALREADY_PLACED' });
    });
  });

  describe('claiming the saga', () => {
    it('the first execution claims a pending order', () => {
      spec.given(orderPlaced).when(claim()).thenDecides([sagaStarted()]);
    });

    it('the same execution on a retry decides nothing', () => {
      spec.given(orderPlaced, sagaStarted()).when(claim()).thenDecides([]);
    });

    it('another execution of a claimed order is refused', () => {
      spec
        .given(orderPlaced, sagaStarted())
        .when(claim(`${EXECUTION}-duplicate`))
        .thenRejects({ code: 'CLAIMED_BY_OTHER' });
    });

    it('any execution of a confirmed or cancelled order is refused', () => {
      spec
        .given(orderPlaced, stockReserved(), orderConfirmed)
        .when(claim())
        .thenRejects({ ...FINAL, status: 'CONFIRMED' });
      spec
        .given(orderPlaced, orderCancelled('OUT_OF_STOCK'))
        .when(claim())
        .thenRejects({ ...FINAL, status: 'CANCELLED' });
      spec
        .given(orderPlaced, sagaStarted(), orderCancelled('TIMEOUT'))
        .when(claim())
        .thenRejects({ ...FINAL, status: 'CANCELLED' });
    });

    it('no order cannot be claimed', () => {
      spec.given().when(claim()).thenRejects({ code: 'NO_SUCH_ORDER' });
    });
  });

  describe('reserving stock', () => {
    it('claims a pending order for the execution and records the stock it holds, in one event', () => {
      const { state } = spec.given(orderPlaced).when(reserve()).thenDecides([stockReserved()]);
      expect(state).toMatchObject({ status: 'PENDING', sagaExecutionArn: EXECUTION, heldStock: HELD });
    });

    it('the execution that claimed it alone (out of stock before) may still reserve', () => {
      spec.given(orderPlaced, sagaStarted()).when(reserve()).thenDecides([stockReserved()]);
      spec
        .given(orderPlaced, sagaStarted())
        .when(reserve(`${EXECUTION}-other`))
        .thenRejects({ code: 'CLAIMED_BY_OTHER' });
    });

    it('decides nothing for an order that holds its stock already; refuses a final one', () => {
      spec.given(orderPlaced, stockReserved()).when(reserve()).thenDecides([]);
      spec
        .given(orderPlaced, stockReserved())
        .when(reserve(`${EXECUTION}-other`))
        .thenRejects({ code: 'CLAIMED_BY_OTHER' });
      spec
        .given(orderPlaced, stockReserved(), orderConfirmed)
        .when(reserve())
        .thenRejects({ ...FINAL, status: 'CONFIRMED' });
      spec
        .given(orderPlaced, orderCancelled('OUT_OF_STOCK'))
        .when(reserve())
        .thenRejects({ ...FINAL, status: 'CANCELLED' });
    });

    it('a confirmed or cancelled order holds no stock any more', () => {
      expect(given(orderPlaced, stockReserved(), orderConfirmed)).not.toHaveProperty('heldStock');
      expect(given(orderPlaced, stockReserved(), orderCancelled('TIMEOUT'))).not.toHaveProperty('heldStock');
    });

    it(`an order with an event at version ${FINAL_FROM_VERSION} is final, whatever its path`, () => {
      // Every decision refuses a final order (or, repeated, decides nothing), so its events never pass the final one.
      const paths: OrderEvent[][] = [
        [orderPlaced, stockReserved(), orderConfirmed],
        [orderPlaced, stockReserved(), orderCancelled('PAYMENT_DECLINED')],
        [orderPlaced, sagaStarted(), orderCancelled('OUT_OF_STOCK')],
      ];
      for (const events of paths) {
        const past = events.slice(0, FINAL_FROM_VERSION);
        expect(existing(given(...past)).status).not.toBe('PENDING');
        for (const command of [claim(), reserve(), cancel('TIMEOUT', at(9)), confirm(at(9))]) {
          const decision = spec.given(...past).when(command).decision;
          expect('events' in decision ? decision.events : []).toEqual([]);
        }
      }
    });
  });

  describe('confirming: when may an order be confirmed?', () => {
    it('a pending order that holds its stock, before its deadline, is confirmed', () => {
      spec.given(orderPlaced, stockReserved()).when(confirm()).thenDecides([orderConfirmed]);
    });

    it('decides nothing for an order already confirmed (idempotent), even past its deadline', () => {
      spec
        .given(orderPlaced, stockReserved(), orderConfirmed)
        .when(confirm(at(60)))
        .thenDecides([]);
    });

    it('refuses a cancelled order', () => {
      spec
        .given(orderPlaced, orderCancelled('OUT_OF_STOCK'))
        .when(confirm(at(9)))
        .thenRejects({ ...FINAL, status: 'CANCELLED' });
    });

    it('refuses a pending order past its deadline', () => {
      spec
        .given(orderPlaced, stockReserved())
        .when(confirm(at(31)))
        .thenRejects({ code: 'DEADLINE_PASSED', deadline: at(30).toISOString() });
    });

    it('refuses a pending order that holds no stock', () => {
      spec.given(orderPlaced, sagaStarted()).when(confirm()).thenRejects({ code: 'NO_STOCK_HELD' });
    });
  });

  describe('cancelling', () => {
    it.each(['OUT_OF_STOCK', 'PAYMENT_DECLINED', 'CONFIRMATION_FAILED', 'TIMEOUT'] as const)(
      'cancels a pending order with reason %s',
      (reason) => {
        spec
          .given(orderPlaced)
          .when(cancel(reason))
          .thenDecides([orderCancelled(reason)]);
      },
    );

    it('names the payment when one is given', () => {
      spec
        .given(orderPlaced)
        .when(cancel('CONFIRMATION_FAILED', at(6), { paymentId: PAYMENT_ID }))
        .thenDecides([orderCancelled('CONFIRMATION_FAILED', PAYMENT_ID)]);
    });

    it('an execution cancels an order whose saga it owns, or that no execution claimed; not another’s', () => {
      spec
        .given(orderPlaced, sagaStarted())
        .when(cancel('TIMEOUT', at(6), { by: EXECUTION }))
        .thenDecides([orderCancelled('TIMEOUT')]);
      spec
        .given(orderPlaced)
        .when(cancel('TIMEOUT', at(6), { by: EXECUTION }))
        .thenDecides([orderCancelled('TIMEOUT')]);
      spec
        .given(orderPlaced, sagaStarted())
        .when(cancel('TIMEOUT', at(6), { by: `${EXECUTION}-other` }))
        .thenRejects({ code: 'CLAIMED_BY_OTHER' });
    });

    it('refuses a confirmed order, and a cancelled one', () => {
      spec
        .given(orderPlaced, stockReserved(), orderConfirmed)
        .when(cancel('TIMEOUT', at(60)))
        .thenRejects({ ...FINAL, status: 'CONFIRMED' });
      spec
        .given(orderPlaced, orderCancelled('OUT_OF_STOCK'))
        .when(cancel('TIMEOUT', at(60)))
        .thenRejects({ ...FINAL, status: 'CANCELLED' });
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
