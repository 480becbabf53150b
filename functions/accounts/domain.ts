import { accept, type Decider, reject } from '../shared/decider';
import type { DomainEvent, Fold } from '../shared/events';

export const DEFAULT_CREDIT_LIMIT_CENTS = 100_000;

/**
 * A customer as its events fold: ids and credit only. The name and email
 * are in its registration event (`CustomerProfile`), not in the folded
 * state, so that the state, which the saga reads, hands from step to step
 * and so writes into the Step Functions history, carries no personal data.
 */
export interface Customer {
  readonly customerId: string;
  readonly creditLimitCents: number;
  /** Captured and not refunded. */
  readonly capturedCents: number;
  readonly status: 'ACTIVE';
  readonly createdAt: string;
  /** The `sub` of the shop caller the record belongs to; none for a customer an admin registered for nobody. */
  readonly ownerSub?: string;
}

export type CustomerState = Customer | null;

/** The personal data of a customer, as its registration recorded it (never changed since). */
export interface CustomerProfile {
  readonly name: string;
  readonly email: string;
}

/** The profile a registration event recorded, if `event` is one. */
export const profileOf = (event: CustomerEvent): CustomerProfile | undefined =>
  event.type === 'CustomerRegistered' ? { name: event.data.name, email: event.data.email } : undefined;

export type CustomerEvent =
  | DomainEvent<
      'CustomerRegistered',
      {
        customerId: string;
        name: string;
        email: string;
        creditLimitCents: number;
        registeredAt: string;
        ownerSub?: string;
      }
    >
  | DomainEvent<'CreditCaptured', { paymentId: string; orderId: string; amountCents: number }>
  | DomainEvent<'CreditRefunded', { paymentId: string; orderId: string; amountCents: number }>;

const customerFold: Fold<CustomerState, CustomerEvent> = {
  foldVersion: 1,
  initial: null,
  // Earlier versions folded the name and email into the state: dropped from their snapshots as they are read.
  upcastState(state) {
    if (!state) return state;
    const { name: _name, email: _email, ...credit } = state as Customer & Partial<CustomerProfile>;
    return credit;
  },
  evolve(state, event) {
    switch (event.type) {
      case 'CustomerRegistered':
        return {
          customerId: event.data.customerId,
          creditLimitCents: event.data.creditLimitCents,
          capturedCents: 0,
          status: 'ACTIVE',
          createdAt: event.data.registeredAt,
          ...(event.data.ownerSub ? { ownerSub: event.data.ownerSub } : {}),
        };
      case 'CreditCaptured':
        return state && { ...state, capturedCents: state.capturedCents + event.data.amountCents };
      case 'CreditRefunded':
        return state && { ...state, capturedCents: state.capturedCents - event.data.amountCents };
    }
  },
};

export const availableCreditCents = (customer: Customer) =>
  customer.creditLimitCents - customer.capturedCents;

export interface CreditMovement {
  readonly paymentId: string;
  readonly orderId: string;
  readonly amountCents: number;
}

export type CustomerCommand =
  | {
      readonly type: 'Register';
      readonly customerId: string;
      readonly name: string;
      readonly email: string;
      readonly creditLimitCents?: number | undefined;
      readonly ownerSub?: string | undefined;
      readonly now: Date;
    }
  /** Captures a payment's amount if it fits in the customer's available credit. */
  | { readonly type: 'CaptureCredit'; readonly payment: CreditMovement }
  /** Gives a refunded payment's amount back. */
  | { readonly type: 'RefundCredit'; readonly payment: CreditMovement };

export type CustomerRejection =
  | { readonly code: 'ALREADY_REGISTERED' }
  | { readonly code: 'NO_SUCH_CUSTOMER' }
  | { readonly code: 'INSUFFICIENT_CREDIT'; readonly availableCents: number };

export const customerDecider: Decider<CustomerCommand, CustomerState, CustomerEvent, CustomerRejection> = {
  ...customerFold,
  decide(command, state) {
    if (command.type === 'Register') {
      if (state) return reject({ code: 'ALREADY_REGISTERED' });
      return accept<CustomerEvent>({
        type: 'CustomerRegistered',
        schemaVersion: 1,
        data: {
          customerId: command.customerId,
          name: command.name,
          email: command.email,
          creditLimitCents: command.creditLimitCents ?? DEFAULT_CREDIT_LIMIT_CENTS,
          registeredAt: command.now.toISOString(),
          ...(command.ownerSub ? { ownerSub: command.ownerSub } : {}),
        },
      });
    }
    if (!state) return reject({ code: 'NO_SUCH_CUSTOMER' });
    if (command.type === 'RefundCredit') {
      return accept<CustomerEvent>({ type: 'CreditRefunded', schemaVersion: 1, data: command.payment });
    }
    const availableCents = availableCreditCents(state);
    if (command.payment.amountCents > availableCents)
      return reject({ code: 'INSUFFICIENT_CREDIT', availableCents });
    return accept<CustomerEvent>({ type: 'CreditCaptured', schemaVersion: 1, data: command.payment });
  },
};

// ---- ownership ---------------------------------------------------------------

/**
 * Which customer a `sub` owns: a claim made once, in the same transaction as
 * the customer's registration, at the first version of an aggregate named
 * after the sub (`ownerClaimId`). Its first append is conditional, as every
 * first append is, so a second registration by the same sub cannot land,
 * however close the two are: one customer per sub, race-free.
 */
export type OwnerClaim = { readonly customerId: string } | null;

export type OwnerClaimEvent = DomainEvent<'CustomerOwnerClaimed', { customerId: string }>;

export const ownerClaimFold: Fold<OwnerClaim, OwnerClaimEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'CustomerOwnerClaimed':
        return state ?? { customerId: event.data.customerId };
    }
  },
};

export const ownerClaimed = (customerId: string): OwnerClaimEvent => ({
  type: 'CustomerOwnerClaimed',
  schemaVersion: 1,
  data: { customerId },
});
