// Pure decider tests for the payments domain: given events (folded), then
// the state; and the payment id derived from the order id.
import {
  type Payment,
  type PaymentCommand,
  type PaymentEvent,
  type PaymentState,
  paymentDecider,
  paymentIdFor,
  shownPayment,
} from '../../functions/payments/domain';
import { paymentView } from '../../functions/payments/http-views';
import { isId, newId } from '../../functions/shared/ids';
import { deciderSpec } from '../support/decider-spec';

const T0 = '2025-03-01T10:00:00.000Z';
const T1 = '2025-03-01T10:00:05.000Z';
const ORDER_ID = 'ord_0123456789abcdef0123456789abcdef';
const PAYMENT_ID = 'pay_0123456789abcdef0123456789abcdef';
const CUSTOMER_ID = 'cus_0123456789abcdef0123456789abcdef';

const spec = deciderSpec(paymentDecider);
const given = (...events: PaymentEvent[]): PaymentState => spec.given(...events).state;

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

const voided: PaymentEvent = {
  type: 'PaymentVoided',
  schemaVersion: 1,
  data: { paymentId: PAYMENT_ID, orderId: ORDER_ID, at: T1 },
};

function existing(state: PaymentState): Payment {
  const payment = shownPayment(state);
  if (!payment) throw new Error('expected a payment');
  return payment;
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

  describe('settling', () => {
    const { at: _at, ...payment } = facts;
    const settle = (captured: boolean): PaymentCommand => ({
      type: 'Settle',
      payment,
      captured,
      now: new Date(T0),
    });

    it('decides PaymentCaptured when the credit capture was accepted', () => {
      spec.given().when(settle(true)).thenDecides([captured]);
    });

    it('decides PaymentDeclined when it was declined', () => {
      spec.given().when(settle(false)).thenDecides([declined]);
    });

    it('decides nothing for a payment captured already (a repeated capture finds it)', () => {
      spec.given(captured).when(settle(true)).thenDecides([]);
      spec.given(captured).when(settle(false)).thenDecides([]);
    });

    it('refuses a payment settled otherwise, or voided', () => {
      spec.given(declined).when(settle(true)).thenRejects({ code: 'ALREADY_SETTLED', status: 'DECLINED' });
      spec
        .given(captured, refunded)
        .when(settle(true))
        .thenRejects({ code: 'ALREADY_SETTLED', status: 'REFUNDED' });
      spec.given(voided).when(settle(true)).thenRejects({ code: 'ALREADY_SETTLED', status: 'VOIDED' });
    });
  });

  describe('undoing', () => {
    const undo: PaymentCommand = {
      type: 'Undo',
      paymentId: PAYMENT_ID,
      orderId: ORDER_ID,
      now: new Date(T1),
    };

    it('refunds a captured payment', () => {
      spec.given(captured).when(undo).thenDecides([refunded]);
    });

    it('is idempotent: refunding twice decides nothing the second time', () => {
      const { state } = spec.given(captured).when(undo).thenDecides([refunded]);
      expect(existing(state).status).toBe('REFUNDED');
      spec.given(captured, refunded).when(undo).thenDecides([]);
    });

    it('decides nothing for a declined payment', () => {
      spec.given(declined).when(undo).thenDecides([]);
    });

    it('voids a payment never taken, so that none can be captured after; once', () => {
      const { state } = spec.given().when(undo).thenDecides([voided]);
      expect(state).toEqual({ status: 'VOIDED', paymentId: PAYMENT_ID, orderId: ORDER_ID, voidedAt: T1 });
      spec.given(voided).when(undo).thenDecides([]);
    });

    it('a voided payment stored by earlier versions (placeholder customer and amount) loads as VOIDED', () => {
      const legacy = {
        paymentId: PAYMENT_ID,
        orderId: ORDER_ID,
        customerId: '',
        amountCents: 0,
        status: 'VOIDED',
        createdAt: T1,
      };
      expect(paymentDecider.upcastState?.(legacy as unknown as PaymentState)).toEqual({
        status: 'VOIDED',
        paymentId: PAYMENT_ID,
        orderId: ORDER_ID,
        voidedAt: T1,
      });
      expect(paymentDecider.upcastState?.(given(voided))).toEqual(given(voided));
      expect(paymentDecider.upcastState?.(given(captured))).toEqual(given(captured));
    });

    it('a voided payment is not shown', () => {
      expect(shownPayment(given(voided))).toBeUndefined();
      expect(shownPayment(given())).toBeUndefined();
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
