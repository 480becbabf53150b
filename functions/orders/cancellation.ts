import type { inventoryCommands } from '../inventory/commands';
import { paymentIdFor } from '../payments/domain';
import type { paymentsStore } from '../payments/store';
import { type AppendMeta, retryOnConflict } from '../shared/event-store';
import { type CancellationReason, cancel, type Order } from './domain';
import type { ordersStore } from './store';

/**
 * Cancels a pending order with `reason`, giving back the stock it holds in
 * the same transaction (the order's `OrderCancelled` and the shards'
 * `StockReleased`): a cancelled order never holds stock, and a step still in
 * flight for it cannot take any, since every append of the order is
 * conditional on its version. `mayCancel` may refuse for an order it does
 * not own. Returns the order as it was before, if this call cancelled it.
 */
export function orderCancellation(
  orders: ReturnType<typeof ordersStore>,
  payments: ReturnType<typeof paymentsStore>,
  inventory: ReturnType<typeof inventoryCommands>,
) {
  return (
    orderId: string,
    reason: CancellationReason,
    meta: AppendMeta,
    mayCancel: (order: Order) => boolean = () => true,
  ): Promise<Order | undefined> =>
    retryOnConflict(async () => {
      const { state, version } = await orders.load(orderId);
      if (state?.status !== 'PENDING' || !mayCancel(state)) return undefined;
      // The cancellation names the payment if one was taken (the refund follows it).
      const payment = await payments.load(paymentIdFor(orderId));
      const paymentId =
        payment.state && payment.state.status !== 'VOIDED' ? payment.state.paymentId : undefined;
      const released = state.heldStock
        ? await inventory.heldStockAppends('StockReleased', state.heldStock, meta)
        : [];
      await inventory.append([
        orders.pending(orderId, version, cancel(state, reason, meta.now, paymentId), state, meta),
        ...released,
      ]);
      return state;
    });
}
