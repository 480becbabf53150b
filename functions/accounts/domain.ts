import type { DomainEvent, Fold } from '../shared/events';

export const DEFAULT_CREDIT_LIMIT_CENTS = 100_000;

export interface Customer {
  readonly customerId: string;
  readonly name: string;
  readonly email: string;
  readonly creditLimitCents: number;
  /** Captured and not refunded. */
  readonly capturedCents: number;
  readonly status: 'ACTIVE';
  readonly createdAt: string;
}

export type CustomerState = Customer | null;

export type CustomerEvent =
  | DomainEvent<
      'CustomerRegistered',
      { customerId: string; name: string; email: string; creditLimitCents: number; registeredAt: string }
    >
  | DomainEvent<'CreditCaptured', { paymentId: string; orderId: string; amountCents: number }>
  | DomainEvent<'CreditRefunded', { paymentId: string; orderId: string; amountCents: number }>;

export const customerFold: Fold<CustomerState, CustomerEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'CustomerRegistered':
        return {
          customerId: event.data.customerId,
          name: event.data.name,
          email: event.data.email,
          creditLimitCents: event.data.creditLimitCents,
          capturedCents: 0,
          status: 'ACTIVE',
          createdAt: event.data.registeredAt,
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

export interface RegisterCustomer {
  readonly customerId: string;
  readonly name: string;
  readonly email: string;
  readonly creditLimitCents?: number | undefined;
  readonly now: Date;
}

export function register(command: RegisterCustomer): CustomerEvent[] {
  return [
    {
      type: 'CustomerRegistered',
      schemaVersion: 1,
      data: {
        customerId: command.customerId,
        name: command.name,
        email: command.email,
        creditLimitCents: command.creditLimitCents ?? DEFAULT_CREDIT_LIMIT_CENTS,
        registeredAt: command.now.toISOString(),
      },
    },
  ];
}

export type CaptureDecision =
  | { readonly accepted: true; readonly events: CustomerEvent[] }
  | { readonly accepted: false };

/** Captures `amountCents` if it fits in the customer's available credit, else declines with no event. */
export function captureCredit(
  customer: Customer,
  payment: { paymentId: string; orderId: string; amountCents: number },
): CaptureDecision {
  if (payment.amountCents > availableCreditCents(customer)) return { accepted: false };
  return { accepted: true, events: [{ type: 'CreditCaptured', schemaVersion: 1, data: payment }] };
}

export function refundCredit(payment: {
  paymentId: string;
  orderId: string;
  amountCents: number;
}): CustomerEvent[] {
  return [{ type: 'CreditRefunded', schemaVersion: 1, data: payment }];
}

/** The public view of a customer, as `GET /customers/{id}` answers it. */
export const customerView = (c: Customer) => ({
  customerId: c.customerId,
  name: c.name,
  email: c.email,
  creditLimitCents: c.creditLimitCents,
  availableCreditCents: availableCreditCents(c),
  status: c.status,
  createdAt: c.createdAt,
});
