import { type CreditMovement, type CustomerEvent, type CustomerState, customerDecider } from '../accounts';
import type { Order, OrderRejection } from '../orders';
import { type PaymentEvent, type PaymentState, paymentDecider } from '../payments';
import { isRejection } from '../shared/decider';
import type { BusinessErrorName } from './contract';

/**
 * The saga's cross-aggregate rules, pure: what a step decides from the
 * aggregates it read (the order, the payment, the customer), and which
 * business outcome ends it. They return decisions and never throw; the steps
 * (the use cases application.ts composes) read, call these, write what they
 * decide in one transaction, and raise a refusal as the error the state
 * machine catches by name (steps.ts, `failureOf`).
 */

/** A business outcome that ends the step: the state machine catches `error` by name and cancels the order. */
export interface Refusal {
  readonly kind: 'refuse';
  readonly error: BusinessErrorName;
  readonly message: string;
}

/** The aggregates broke an invariant the saga relies on: a bug, never a business outcome (the step fails). */
export interface Broken {
  readonly kind: 'broken';
  readonly message: string;
}

/** A decision that ends the step without writing anything. */
export type Failure = Refusal | Broken;

const refuse = (error: BusinessErrorName, message: string): Refusal => ({ kind: 'refuse', error, message });

const deadlineExceeded = (orderId: string, deadline: string) =>
  refuse('DeadlineExceeded', `order ${orderId} passed its deadline ${deadline}`);

/** Forward steps refuse to start past the saga's deadline, so the saga turns to compensation. */
export function checkDeadline(
  input: { orderId: string; deadline: string },
  now: Date,
): { readonly kind: 'proceed' } | Refusal {
  return now.getTime() > Date.parse(input.deadline)
    ? deadlineExceeded(input.orderId, input.deadline)
    : { kind: 'proceed' };
}

/** An order short of stock: ReserveStock claims it, then refuses. */
export function outOfStock(items: readonly string[]): Refusal {
  return refuse('OutOfStock', `not enough stock of ${items.join(', ')}`);
}

/** Why an order refused to be confirmed, as the step's business outcome. */
export function confirmationRefused(order: Order, rejection: OrderRejection): Refusal {
  switch (rejection.code) {
    case 'DEADLINE_PASSED':
      return deadlineExceeded(order.orderId, rejection.deadline);
    case 'NO_STOCK_HELD':
      return refuse('ConfirmationFailed', `order ${order.orderId} holds no stock`);
    default:
      return refuse('ConfirmationFailed', `order ${order.orderId} is ${order.status}`);
  }
}

export interface PaymentToCapture {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  readonly deadline: string;
}

/**
 * Capturing an order's payment against its customer's credit:
 * - a payment captured already is done (a repeat of the step);
 * - a payment settled otherwise, or voided by compensation, refuses
 *   (`PaymentDeclined`), with nothing written;
 * - past the deadline, or for an unknown customer, it refuses with nothing
 *   written;
 * - else the payment is settled: captured, with the customer's credit
 *   captured in the same transaction, when it fits the available credit;
 *   declined (the payment alone written, then the step refuses) when not.
 */
export type CaptureDecision =
  | { readonly kind: 'done' }
  | {
      readonly kind: 'capture';
      readonly payment: readonly PaymentEvent[];
      readonly credit: readonly CustomerEvent[];
    }
  | {
      readonly kind: 'decline';
      readonly payment: readonly PaymentEvent[];
      /** Raised once `payment` is written. */
      readonly refusal: Refusal;
    }
  | Failure;

export function decideCapture(
  paymentId: string,
  paymentState: PaymentState,
  customer: CustomerState,
  order: PaymentToCapture,
  now: Date,
): CaptureDecision {
  const facts = {
    paymentId,
    orderId: order.orderId,
    customerId: order.customerId,
    amountCents: order.totalCents,
  };
  const settle = (captured: boolean) =>
    paymentDecider.decide({ type: 'Settle', payment: facts, captured, now }, paymentState);
  if (paymentState) {
    const repeat = settle(true);
    if (isRejection(repeat)) {
      return refuse('PaymentDeclined', `payment ${paymentId} is ${repeat.rejection.status}`);
    }
    return { kind: 'done' };
  }
  const deadline = checkDeadline(order, now);
  if (deadline.kind === 'refuse') return deadline;
  const movement: CreditMovement = { paymentId, orderId: order.orderId, amountCents: order.totalCents };
  const credit = customerDecider.decide({ type: 'CaptureCredit', payment: movement }, customer);
  if (isRejection(credit) && credit.rejection.code === 'NO_SUCH_CUSTOMER') {
    return refuse('PaymentDeclined', `customer ${order.customerId} does not exist`);
  }
  const settled = settle(!isRejection(credit));
  if (isRejection(settled)) {
    return { kind: 'broken', message: `payment ${paymentId} refused to settle: ${settled.rejection.code}` };
  }
  if (isRejection(credit)) {
    return {
      kind: 'decline',
      payment: settled.events,
      refusal: refuse(
        'PaymentDeclined',
        `${order.totalCents} exceeds the available credit of ${order.customerId}`,
      ),
    };
  }
  return { kind: 'capture', payment: settled.events, credit: credit.events };
}

/**
 * Undoing an order's payment, to go in one transaction with its
 * cancellation: a captured payment is refunded and the customer's credit
 * given back; a payment never made is voided, so that a capture still in
 * flight cannot land later; a declined, refunded or voided one needs nothing.
 * `recorded` names the payment the cancellation records: one that was settled.
 */
export function decidePaymentUndo(
  paymentId: string,
  orderId: string,
  paymentState: PaymentState,
  now: Date,
): {
  readonly payment: readonly PaymentEvent[];
  readonly refund?: CreditMovement;
  readonly recorded?: string;
} {
  const undo = paymentDecider.decide({ type: 'Undo', paymentId, orderId, now }, paymentState);
  const payment = isRejection(undo) ? [] : undo.events;
  if (!paymentState || paymentState.status === 'VOIDED') return { payment };
  const refunded = payment.some((e) => e.type === 'PaymentRefunded');
  return {
    payment,
    recorded: paymentId,
    ...(refunded ? { refund: { paymentId, orderId, amountCents: paymentState.amountCents } } : {}),
  };
}

/** The credit given back for a refunded payment; a customer that cannot take it back breaks the saga. */
export function decideCreditRefund(
  refund: CreditMovement,
  customer: CustomerState,
): { readonly kind: 'refund'; readonly events: readonly CustomerEvent[] } | Broken {
  const decision = customerDecider.decide({ type: 'RefundCredit', payment: refund }, customer);
  if (isRejection(decision)) {
    return {
      kind: 'broken',
      message: `credit of payment ${refund.paymentId} cannot be refunded: ${decision.rejection.code}`,
    };
  }
  return { kind: 'refund', events: decision.events };
}
