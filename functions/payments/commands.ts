import { refundCredit } from '../accounts/domain';
import { customers } from '../accounts/store';
import { ordersStore } from '../orders/store';
import { documents } from '../shared/aws';
import { type AppendMeta, appendAtomically, retryOnConflict } from '../shared/event-store';
import { paymentIdFor, refund, voidPayment } from './domain';
import { paymentsStore } from './store';

/**
 * Refunds an order's payment if it was captured, giving the credit back in the
 * same transaction; a payment never made is voided so that a late capture
 * cannot land. A confirmed order keeps its payment: the refund is conditional
 * on the order being unchanged since it was read, and confirmation is
 * conditional on the payment being unchanged, so a confirmation that lands
 * late (a step attempt the saga gave up on) and a refund cannot both happen.
 */
export function refundPayments(payments = paymentsStore(), accounts = customers(), orders = ordersStore()) {
  return (orderId: string, meta: AppendMeta) =>
    retryOnConflict(async () => {
      const paymentId = paymentIdFor(orderId);
      const [order, payment] = await Promise.all([orders.load(orderId), payments.load(paymentId)]);
      if (order.state?.status === 'CONFIRMED') return { paymentId, refunded: false, confirmed: true };
      const orderUnchanged = orders.unchanged(orderId, order.version);
      if (!payment.state) {
        await appendAtomically(documents, [
          payments.pending(paymentId, 0, voidPayment(paymentId, orderId, meta.now), null, meta),
          orderUnchanged,
        ]);
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
        orderUnchanged,
      ]);
      return { paymentId, refunded: true };
    });
}
