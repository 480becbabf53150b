import type { inventoryCommands } from '../inventory/commands';
import { type CancellationReason, cancel, type Order } from '../orders/domain';
import type { ordersStore } from '../orders/store';
import type { paymentUndoing } from '../payments/commands';
import { type AppendMeta, retryOnConflict } from '../shared/event-store';

/**
 * Cancels a pending order with `reason` and undoes everything done for it, in
 * one transaction: the order's `OrderCancelled`, the shards' `StockReleased`
 * for the stock it holds, and its payment refunded (or voided, if none was
 * taken). Every saga step's write is conditional on what it read (the order's
 * version, the payment not existing yet), so no step still in flight can land
 * after it, and a confirmation and a cancellation can never both land.
 * `mayCancel` may refuse an order it does not own. Returns the order as it was
 * before, if this call cancelled it.
 */
export function orderCancellation(
  orders: ReturnType<typeof ordersStore>,
  inventory: ReturnType<typeof inventoryCommands>,
  undoPayment: ReturnType<typeof paymentUndoing>,
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
      const [payment, released] = await Promise.all([
        undoPayment(orderId, meta),
        state.heldStock ? inventory.heldStockAppends('StockReleased', state, state.heldStock, meta) : [],
      ]);
      await inventory.append([
        orders.pending(orderId, version, cancel(state, reason, meta.now, payment.paymentId), state, meta),
        ...released,
        ...payment.appends,
      ]);
      return state;
    });
}
