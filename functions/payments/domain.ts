import type { DomainEvent, Fold } from '../shared/events';

/** VOIDED: no payment was ever taken; compensation ruled one out (see `voidPayment`). Never shown to clients. */
export type PaymentStatus = 'CAPTURED' | 'DECLINED' | 'REFUNDED' | 'VOIDED';

export interface Payment {
  readonly paymentId: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly amountCents: number;
  readonly status: PaymentStatus;
  readonly createdAt: string;
}

export type PaymentState = Payment | null;

interface PaymentFacts {
  paymentId: string;
  orderId: string;
  customerId: string;
  amountCents: number;
  at: string;
}

export type PaymentEvent =
  | DomainEvent<'PaymentCaptured', PaymentFacts>
  | DomainEvent<'PaymentDeclined', PaymentFacts>
  | DomainEvent<'PaymentRefunded', { paymentId: string; orderId: string; amountCents: number; at: string }>
  | DomainEvent<'PaymentVoided', { paymentId: string; orderId: string; at: string }>;

export const paymentFold: Fold<PaymentState, PaymentEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'PaymentCaptured':
      case 'PaymentDeclined': {
        const { paymentId, orderId, customerId, amountCents, at } = event.data;
        const status = event.type === 'PaymentCaptured' ? 'CAPTURED' : 'DECLINED';
        return { paymentId, orderId, customerId, amountCents, status, createdAt: at };
      }
      case 'PaymentRefunded':
        return state && { ...state, status: 'REFUNDED' };
      case 'PaymentVoided': {
        const { paymentId, orderId, at } = event.data;
        return { paymentId, orderId, customerId: '', amountCents: 0, status: 'VOIDED', createdAt: at };
      }
    }
  },
};

/** One payment per order: its id is derived from the order's, so a repeated capture finds the first. */
export const paymentIdFor = (orderId: string) => `pay_${orderId.slice(orderId.indexOf('_') + 1)}`;

export const paymentView = (p: Payment) => ({
  paymentId: p.paymentId,
  orderId: p.orderId,
  customerId: p.customerId,
  amountCents: p.amountCents,
  status: p.status,
  createdAt: p.createdAt,
});

/** The payment's first event: captured when the credit capture was accepted, else declined. */
export function settle(facts: Omit<PaymentFacts, 'at'>, captured: boolean, now: Date): PaymentEvent[] {
  const data = { ...facts, at: now.toISOString() };
  return [
    captured
      ? { type: 'PaymentCaptured', schemaVersion: 1, data }
      : { type: 'PaymentDeclined', schemaVersion: 1, data },
  ];
}

/** Refunds a captured payment; any other payment decides nothing. */
export function refund(payment: Payment, now: Date): PaymentEvent[] {
  if (payment.status !== 'CAPTURED') return [];
  return [
    {
      type: 'PaymentRefunded',
      schemaVersion: 1,
      data: {
        paymentId: payment.paymentId,
        orderId: payment.orderId,
        amountCents: payment.amountCents,
        at: now.toISOString(),
      },
    },
  ];
}

/**
 * Rules out an order's payment that was never taken: compensation writes it
 * where the payment would go, so a capture still in flight (a step that timed
 * out but had not yet written) can no longer land.
 */
export function voidPayment(paymentId: string, orderId: string, now: Date): PaymentEvent[] {
  return [{ type: 'PaymentVoided', schemaVersion: 1, data: { paymentId, orderId, at: now.toISOString() } }];
}
