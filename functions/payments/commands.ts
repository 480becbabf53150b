import { refundCredit } from '../accounts/domain';
import { customers } from '../accounts/store';
import { documents } from '../shared/aws';
import { type AppendMeta, appendAtomically, retryOnConflict } from '../shared/event-store';
import { paymentIdFor, refund, voidPayment } from './domain';
import { paymentsStore } from './store';

/** Refunds an order's payment if it was captured, giving the credit back in the same transaction. */
export function refundPayments(payments = paymentsStore(), accounts = customers()) {
  return (orderId: string, meta: AppendMeta) =>
    retryOnConflict(async () => {
      const paymentId = paymentIdFor(orderId);
      const payment = await payments.load(paymentId);
      if (!payment.state) {
        await payments.append(paymentId, 0, voidPayment(paymentId, orderId, meta.now), null, meta);
        return { paymentId, refunded: false };
      }
      const events = refund(payment.state, meta.now);
      if (events.length === 0) return { paymentId, refunded: false };
      const customer = await accounts.load(payment.state.customerId);
      const credit = { paymentId, orderId, amountCents: payment.state.amountCents };
      await appendAtomically(documents, [
        payments.pending(paymentId, payment.version, events, payment.state, meta),
        accounts.pending(
          payment.state.customerId,
          customer.version,
          refundCredit(credit),
          customer.state,
          meta,
        ),
      ]);
      return { paymentId, refunded: true };
    });
}
