// Pure decider tests for the payments domain: given events (folded), then
// the state; and the payment id derived from the order id.
import {
  type Payment,
  type PaymentEvent,
  type PaymentState,
  paymentFold,
  paymentIdFor,
  paymentView,
  refund,
  settle,
} from '../../functions/payments/domain';
import { foldEvents } from '../../functions/shared/events';
import { isId, newId } from '../../functions/shared/ids';

const T0 = '2025-03-01T10:00:00.000Z';
const T1 = '2025-03-01T10:00:05.000Z';
const ORDER_ID = 'ord_0123456789abcdef0123456789abcdef';
const PAYMENT_ID = 'pay_0123456789abcdef0123456789abcdef';
const CUSTOMER_ID = 'cus_0123456789abcdef0123456789abcdef';

const given = (...events: PaymentEvent[]): PaymentState =>
  foldEvents(paymentFold, paymentFold.initial, events);

const facts = {
  paymentId: PAYMENT_ID,
  orderId: ORDER_ID,
  customerId: CUSTOMER_ID,
  amountCents: 3_499,
  at: T0,
};
const captured: PaymentEvent = { type: 'PaymentCaptured', schemaVersion: 1, data: facts };
const declined: PaymentEvent = { type: 'PaymentDeclined', schemaVersion: 1, data: facts };
const refunded: PaymentEvent = {
  type: 'PaymentRefunded',
  schemaVersion: 1,
  data: { paymentId: PAYMENT_ID, orderId: ORDER_ID, amountCents: 3_499, at: T1 },
};

function existing(state: PaymentState): Payment {
  if (!state) throw new Error('expected a payment');
  return state;
}

describe('payments domain', () => {
  describe('evolve', () => {
    it('starts with no payment', () => {
      expect(given()).toBeNull();
    });

    it('PaymentCaptured records a captured payment', () => {
      expect(given(captured)).toEqual({
        paymentId: PAYMENT_ID,
        orderId: ORDER_ID,
        customerId: CUSTOMER_ID,
        amountCents: 3_499,
        status: 'CAPTURED',
        createdAt: T0,
      });
    });

    it('PaymentDeclined records a declined payment', () => {
      expect(existing(given(declined))).toEqual({ ...existing(given(captured)), status: 'DECLINED' });
    });

    it('PaymentRefunded marks a captured payment refunded and keeps when it was made', () => {
      expect(given(captured, refunded)).toEqual({ ...existing(given(captured)), status: 'REFUNDED' });
    });

    it('a refund of no payment leaves none', () => {
      expect(given(refunded)).toBeNull();
    });
  });

  describe('settle', () => {
    const { at: _at, ...settled } = facts;

    it('decides PaymentCaptured when the credit capture was accepted', () => {
      expect(settle(settled, true, new Date(T0))).toEqual([captured]);
    });

    it('decides PaymentDeclined when it was declined', () => {
      expect(settle(settled, false, new Date(T0))).toEqual([declined]);
    });
  });

  describe('refund', () => {
    it('refunds a captured payment', () => {
      expect(refund(existing(given(captured)), new Date(T1))).toEqual([refunded]);
    });

    it('is idempotent: refunding twice decides nothing the second time', () => {
      const payment = existing(given(captured));
      const after = existing(foldEvents(paymentFold, payment, refund(payment, new Date(T1))));
      expect(after.status).toBe('REFUNDED');
      expect(refund(after, new Date(T1))).toEqual([]);
    });

    it('decides nothing for a declined payment', () => {
      expect(refund(existing(given(declined)), new Date(T1))).toEqual([]);
    });
  });

  describe('paymentIdFor', () => {
    it('derives the payment id from the order id', () => {
      expect(paymentIdFor(ORDER_ID)).toBe(PAYMENT_ID);
    });

    it('is deterministic: the same order always gives the same payment', () => {
      const orderId = newId('ord');
      expect(paymentIdFor(orderId)).toBe(paymentIdFor(orderId));
      expect(isId('pay', paymentIdFor(orderId))).toBe(true);
    });

    it('gives different orders different payments', () => {
      const ids = Array.from({ length: 50 }, () => newId('ord'));
      expect(new Set(ids.map(paymentIdFor)).size).toBe(50);
    });

    it('keeps the order id suffix after the prefix', () => {
      const orderId = newId('ord');
      expect(paymentIdFor(orderId)).toBe(`pay_${orderId.slice('ord_'.length)}`);
    });
  });

  describe('paymentView', () => {
    it('shows the payment fields', () => {
      expect(paymentView(existing(given(captured, refunded)))).toEqual({
        paymentId: PAYMENT_ID,
        orderId: ORDER_ID,
        customerId: CUSTOMER_ID,
        amountCents: 3_499,
        status: 'REFUNDED',
        createdAt: T0,
      });
    });
  });
});
