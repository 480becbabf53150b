import { paymentIdFor } from '../payments';
import type { AppendMeta, PendingAppend } from '../shared/event-store';
import type { SagaContext } from './context';
import { decideCreditRefund, decidePaymentUndo } from './rules';
import { failureOf } from './steps';

/**
 * Compensation, RefundPayment or VoidPayment: what undoing an order's
 * payment writes (see `decidePaymentUndo`), to go in the transaction that
 * cancels the order. A captured payment is refunded and the customer's credit
 * given back (the customer is read only then); a payment never made is
 * voided. `recorded` names the payment the cancellation records.
 */
export function undoPayment({ payments, customers }: SagaContext) {
  return async (
    orderId: string,
    meta: AppendMeta,
  ): Promise<{ recorded: string | undefined; appends: PendingAppend[] }> => {
    const paymentId = paymentIdFor(orderId);
    const payment = await payments.load(paymentId);
    const undo = decidePaymentUndo(paymentId, orderId, payment.state, meta.now);
    const appends: PendingAppend[] = [];
    if (undo.payment.length > 0) {
      appends.push(payments.pending(paymentId, payment.version, undo.payment, payment.state, meta));
    }
    if (undo.refund && payment.state && payment.state.status !== 'VOIDED') {
      const customerId = payment.state.customerId;
      const customer = await customers.load(customerId);
      const refund = decideCreditRefund(undo.refund, customer.state);
      if (refund.kind === 'broken') throw failureOf(refund);
      appends.push(customers.pending(customerId, customer.version, refund.events, customer.state, meta));
    }
    return { recorded: undo.recorded, appends };
  };
}
