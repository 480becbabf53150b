import { type CreditMovement, type CustomerEvent, type CustomerState, customerDecider } from '../accounts';
import type { Order, OrderRejection } from '../orders';
import { type PaymentEvent, type PaymentState, paymentDecider } from '../payments';
import { isRejection } from '../shared/decider';
import { SagaError } from './steps';

/**
 * The saga's cross-aggregate rules, pure: what a step decides from the
 * aggregates it read (the order, the payment, the customer), and which
 * business error ends it. The steps (application.ts) read, call these, and
 * write what they decide in one transaction.
 */

/** Forward steps refuse to start past the saga's deadline, so the saga turns to compensation. */
export function assertBeforeDeadline(input: { orderId: string; deadline: string }, now: Date) {
  if (now.getTime() > Date.parse(input.deadline)) throw deadlineExceeded(input.orderId, input.deadline);
}

const deadlineExceeded = (orderId: string, deadline: string) =>
  new SagaError('DeadlineExceeded', `order ${orderId} passed its deadline ${deadline}`);

/** Why an order refused to be confirmed, as the step's business error. */
export function confirmationRefused(order: Order, rejection: OrderRejection): SagaError {
  switch (rejection.code) {
    case 'DEADLINE_PASSED':
      return deadlineExceeded(order.orderId, rejection.deadline);
    case 'NO_STOCK_HELD':
      return new SagaError('ConfirmationFailed', `order ${order.orderId} holds no stock`);
    default:
      return new SagaError('ConfirmationFailed', `order ${order.orderId} is ${order.status}`);
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
 * - a payment settled otherwise, or voided by compensation, declines;
 * - past the deadline, nothing is written;
 * - an unknown customer declines, with nothing written;
 * - else the payment is settled: captured, with the customer's credit
 *   captured in the same transaction, when it fits the available credit;
 *   declined (the payment alone written, then the step fails) when not.
 */
export type CaptureDecision =
  | { readonly done: true }
  | {
      readonly done: false;
      readonly payment: readonly PaymentEvent[];
      readonly credit?: readonly CustomerEvent[];
      /** Set when the payment is declined: raised once `payment` is written. */
      readonly declined?: SagaError;
    };

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
      throw new SagaError('PaymentDeclined', `payment ${paymentId} is ${repeat.rejection.status}`);
    }
    return { done: true };
  }
  assertBeforeDeadline(order, now);
  const movement: CreditMovement = { paymentId, orderId: order.orderId, amountCents: order.totalCents };
  const credit = customerDecider.decide({ type: 'CaptureCredit', payment: movement }, customer);
  if (isRejection(credit) && credit.rejection.code === 'NO_SUCH_CUSTOMER') {
    throw new SagaError('PaymentDeclined', `customer ${order.customerId} does not exist`);
  }
  const settled = settle(!isRejection(credit));
  if (isRejection(settled))
    throw new Error(`payment ${paymentId} refused to settle: ${settled.rejection.code}`);
  if (isRejection(credit)) {
    const declined = new SagaError(
      'PaymentDeclined',
      `${order.totalCents} exceeds the available credit of ${order.customerId}`,
    );
    return { done: false, payment: settled.events, declined };
  }
  return { done: false, payment: settled.events, credit: credit.events };
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

/** The credit given back for a refunded payment. */
export function decideCreditRefund(
  refund: CreditMovement,
  customer: CustomerState,
): readonly CustomerEvent[] {
  const decision = customerDecider.decide({ type: 'RefundCredit', payment: refund }, customer);
  if (isRejection(decision))
    throw new Error(`credit of payment ${refund.paymentId} cannot be refunded: ${decision.rejection.code}`);
  return decision.events;
}
