import { customers, refundCredit } from '../accounts';
import type { AppendMeta, PendingAppend } from '../shared/event-store';
import { paymentIdFor, refund, voidPayment } from './domain';
import { paymentsStore } from './store';

/**
 * What undoing an order's payment writes, to go in one transaction with the
 * order's cancellation: a captured payment is refunded and the customer's
 * credit given back (conditional on the customer's version); a payment never
 * made is voided, so that a capture still in flight cannot land later; a
 * declined, refunded or voided one needs nothing. `paymentId` names a payment
 * that was taken, for the cancellation event.
 */
export function paymentUndoing(payments = paymentsStore(), accounts = customers()) {
  return async (
    orderId: string,
    meta: AppendMeta,
  ): Promise<{ paymentId?: string; appends: PendingAppend[] }> => {
    const paymentId = paymentIdFor(orderId);
    const payment = await payments.load(paymentId);
    if (!payment.state) {
      return {
        appends: [payments.pending(paymentId, 0, voidPayment(paymentId, orderId, meta.now), null, meta)],
      };
    }
    if (payment.state.status === 'VOIDED') return { appends: [] };
    const events = refund(payment.state, meta.now);
    if (events.length === 0) return { paymentId, appends: [] };
    const customer = await accounts.load(payment.state.customerId);
    const credit = { paymentId, orderId, amountCents: payment.state.amountCents };
    return {
      paymentId,
      appends: [
        payments.pending(paymentId, payment.version, events, payment.state, meta),
        accounts.pending(
          payment.state.customerId,
          customer.version,
          refundCredit(credit),
          customer.state,
          meta,
        ),
      ],
    };
  };
}
