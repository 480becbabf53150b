import type { DomainEvent, Fold } from '../shared/events';

export type PaymentStatus = 'CAPTURED' | 'DECLINED' | 'REFUNDED';

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
  | DomainEvent<'PaymentRefunded', { paymentId: string; orderId: string; amountCents: number; at: string }>;

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
