import { type CancellationReason, type Order, orderDecider, type PendingOrder } from '../orders';
import { acceptedEvents, isRejection } from '../shared/decider';
import { type AppendMeta, retryOnConflict } from '../shared/event-store';
import type { SagaContext } from './context';
import type { StepInput, StepOutput } from './contract';
import { undoPayment } from './undo-payment';

/** Compensation, ReleaseStock: the shards' `StockReleased` for the stock a pending order holds. */
export function releaseStock({ stock }: SagaContext) {
  return (order: PendingOrder, meta: AppendMeta) =>
    order.heldStock ? stock.heldStockAppends('StockReleased', order, order.heldStock, meta) : [];
}

/**
 * Compensation, CancelOrder: cancels a pending order with `reason` and undoes
 * everything done for it, in one transaction: the order's `OrderCancelled`,
 * its stock released (`releaseStock`), and its payment refunded with the
 * customer's credit given back, or voided if none was taken (`undoPayment`).
 * Every saga step's write is conditional on what it read (the order's
 * version, the payment not existing yet), so no step still in flight can land
 * after it, and a confirmation and a cancellation can never both land. `by`,
 * the execution asking, must own the order's saga (none: the sweeper).
 * Returns the order as it was before, if this call cancelled it.
 */
export function cancelOrder(context: SagaContext) {
  const { orders, stock } = context;
  const released = releaseStock(context);
  const paymentUndoing = undoPayment(context);
  return (
    orderId: string,
    reason: CancellationReason,
    meta: AppendMeta,
    by?: string,
  ): Promise<Order | undefined> =>
    retryOnConflict(async () => {
      const { state, version } = await orders.load(orderId);
      const command = { type: 'Cancel', reason, now: meta.now, ...(by === undefined ? {} : { by }) } as const;
      const cancellable = orderDecider.decide(command, state);
      if (isRejection(cancellable) || state?.status !== 'PENDING') return undefined;
      const [payment, stockReleased] = await Promise.all([
        paymentUndoing(orderId, meta),
        released(state, meta),
      ]);
      const cancelled = payment.recorded
        ? acceptedEvents(orderDecider.decide({ ...command, paymentId: payment.recorded }, state))
        : cancellable.events;
      await stock.append([
        orders.pending(orderId, version, cancelled, state, meta),
        ...stockReleased,
        ...payment.appends,
      ]);
      return state;
    });
}

/**
 * The saga's compensating step (the state machine's CancelOrder): cancels the
 * order with its reason (see `cancelOrder`). An execution that lost the claim
 * (it failed before learning so) leaves the owner's order alone.
 */
export function cancelOrderStep(context: SagaContext) {
  const cancel = cancelOrder(context);
  return async (input: StepInput<'cancel'>, now: Date): Promise<StepOutput<'cancel'>> => {
    const { reason } = input;
    const meta = { now, correlationId: input.correlationId };
    const cancelled = await cancel(input.orderId, reason, meta, input.executionArn);
    if (cancelled) context.observer.cancelled(cancelled, now, reason);
    return { cancelled: cancelled !== undefined, reason };
  };
}
