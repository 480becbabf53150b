import { cancelOrder, cancelOrderStep } from './cancel-order';
import { capturePayment } from './capture-payment';
import { confirmOrder } from './confirm-order';
import { type SagaObserver, type SagaStores, sagaContext } from './context';
import { reserveStock } from './reserve-stock';

export type { SagaObserver, SagaStores } from './context';

/**
 * The order saga's steps as use cases, one file each, named as the state
 * machine names them: ReserveStock (reserve-stock.ts), CapturePayment
 * (capture-payment.ts), ConfirmOrder (confirm-order.ts), and the compensation
 * CancelOrder (cancel-order.ts), which releases the stock and refunds or
 * voids the payment (undo-payment.ts) in the transaction that cancels the
 * order. Each reads the aggregates it needs, decides with their deciders and
 * the saga's rules (rules.ts), and writes what it decided in one transaction
 * across the modules' tables, retrying from a fresh read when another writer
 * got there first.
 */
export function sagaUseCases(stores: SagaStores, observer: SagaObserver) {
  const context = sagaContext(stores, observer);
  return {
    /** Cancels an order and undoes what was done for it: the compensation, and the sweeper's. */
    cancelOrder: cancelOrder(context),
    reserve: reserveStock(context),
    capture: capturePayment(context),
    confirm: confirmOrder(context),
    cancel: cancelOrderStep(context),
  };
}
