import { accept, alreadyDone, type Decider, reject } from '../shared/decider';
import type { DomainEvent } from '../shared/events';

/**
 * A payment: one per order (see `paymentIdFor`). Captured or declined when
 * the saga settles it, refunded when a captured one is undone; voided when
 * compensation found none taken, so that a capture still in flight can no
 * longer land. A voided payment is no payment: it has no customer or amount,
 * and is never shown to clients.
 */
interface PaymentTaken {
  readonly paymentId: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly amountCents: number;
  readonly createdAt: string;
}

export interface CapturedPayment extends PaymentTaken {
  readonly status: 'CAPTURED';
}
export interface DeclinedPayment extends PaymentTaken {
  readonly status: 'DECLINED';
}
export interface RefundedPayment extends PaymentTaken {
  readonly status: 'REFUNDED';
}
export interface VoidedPayment {
  readonly status: 'VOIDED';
  readonly paymentId: string;
  readonly orderId: string;
  readonly voidedAt: string;
}

/** A payment a client may see: one that was settled. */
export type Payment = CapturedPayment | DeclinedPayment | RefundedPayment;
/** No payment yet (null), a settled one, or the marker that none may be taken. */
export type PaymentState = Payment | VoidedPayment | null;
export type PaymentStatus = (Payment | VoidedPayment)['status'];

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

export type PaymentCommand =
  /** Records the payment as the customer's credit decided it: captured if accepted, else declined. */
  | {
      readonly type: 'Settle';
      readonly payment: Omit<PaymentFacts, 'at'>;
      readonly captured: boolean;
      readonly now: Date;
    }
  /** Undoes the order's payment: refunds a captured one, voids one never taken; any other stays as it is. */
  | { readonly type: 'Undo'; readonly paymentId: string; readonly orderId: string; readonly now: Date };

/** Settling a payment that was settled otherwise than captured, or voided. */
export type PaymentRejection = { readonly code: 'ALREADY_SETTLED'; readonly status: PaymentStatus };

export const paymentDecider: Decider<PaymentCommand, PaymentState, PaymentEvent, PaymentRejection> = {
  foldVersion: 1,
  initial: null,
  // Earlier versions stored a voided payment with a placeholder customer and amount, and its time as createdAt.
  upcastState(state) {
    if (state?.status !== 'VOIDED' || 'voidedAt' in state) return state;
    const legacy = state as unknown as { paymentId: string; orderId: string; createdAt: string };
    return {
      status: 'VOIDED',
      paymentId: legacy.paymentId,
      orderId: legacy.orderId,
      voidedAt: legacy.createdAt,
    };
  },
  evolve(state, event) {
    switch (event.type) {
      case 'PaymentCaptured':
      case 'PaymentDeclined': {
        const { paymentId, orderId, customerId, amountCents, at } = event.data;
        const taken = { paymentId, orderId, customerId, amountCents, createdAt: at };
        return event.type === 'PaymentCaptured'
          ? { ...taken, status: 'CAPTURED' }
          : { ...taken, status: 'DECLINED' };
      }
      case 'PaymentRefunded':
        return state?.status === 'CAPTURED' ? { ...state, status: 'REFUNDED' } : state;
      case 'PaymentVoided': {
        const { paymentId, orderId, at } = event.data;
        return { status: 'VOIDED', paymentId, orderId, voidedAt: at };
      }
    }
  },
  decide(command, state) {
    const at = command.now.toISOString();
    switch (command.type) {
      case 'Settle': {
        // A repeated capture finds the payment it made.
        if (state?.status === 'CAPTURED') return alreadyDone;
        if (state) return reject({ code: 'ALREADY_SETTLED', status: state.status });
        const data = { ...command.payment, at };
        return accept<PaymentEvent>(
          command.captured
            ? { type: 'PaymentCaptured', schemaVersion: 1, data }
            : { type: 'PaymentDeclined', schemaVersion: 1, data },
        );
      }
      case 'Undo': {
        const { paymentId, orderId } = command;
        if (!state)
          return accept<PaymentEvent>({
            type: 'PaymentVoided',
            schemaVersion: 1,
            data: { paymentId, orderId, at },
          });
        if (state.status !== 'CAPTURED') return alreadyDone;
        const data = { paymentId, orderId, amountCents: state.amountCents, at };
        return accept<PaymentEvent>({ type: 'PaymentRefunded', schemaVersion: 1, data });
      }
    }
  },
};

/** The payment a client may see: a voided one is the saga's marker that none may be taken, not a payment. */
export const shownPayment = (state: PaymentState): Payment | undefined =>
  state && state.status !== 'VOIDED' ? state : undefined;

/** One payment per order: its id is derived from the order's, so a repeated capture finds the first. */
export const paymentIdFor = (orderId: string) => `pay_${orderId.slice(orderId.indexOf('_') + 1)}`;
