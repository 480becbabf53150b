import { inventoryCommands } from '../../inventory/commands';
import { inventorySettings } from '../../inventory/settings';
import { inventoryStores } from '../../inventory/store';
import { paymentUndoing } from '../../payments/commands';
import { paymentIdFor } from '../../payments/domain';
import { retryOnConflict } from '../../shared/event-store';
import { metrics } from '../../shared/powertools';
import { assertBeforeDeadline, SagaError, type SagaStepInput, sagaSteps } from '../../shared/saga';
import { orderCancellation } from '../cancellation';
import { type CancellationReason, confirm, type Order } from '../domain';
import { ordersStore } from '../store';

const orders = ordersStore();
const inventory = inventoryCommands(inventoryStores(), inventorySettings());
const cancelOrder = orderCancellation(orders, inventory, paymentUndoing());

async function loadOrder(orderId: string) {
  const loaded = await orders.load(orderId);
  if (!loaded.state) throw new Error(`order ${orderId} does not exist`);
  return { state: loaded.state, version: loaded.version };
}

/** EMF metrics of a saga's outcome: how many, why, and how long from placement. */
function recordOutcome(
  order: Order,
  outcome: 'Confirmed' | 'Cancelled',
  now: Date,
  reason?: CancellationReason,
) {
  metrics.addMetric(`Saga${outcome}`, 'Count', 1);
  if (reason) {
    const byReason = metrics.singleMetric();
    byReason.addDimension('reason', reason);
    byReason.addMetric('SagaCancelledByReason', 'Count', 1);
  }
  metrics.addMetric('SagaDurationMs', 'Milliseconds', now.getTime() - Date.parse(order.createdAt));
  metrics.publishStoredMetrics();
}

/**
 * The saga's order steps: confirm the order (its stock becomes sold in the
 * same transaction), or cancel it with its reason, undoing in the same
 * transaction whatever was done for it. (The claim of the order for one
 * execution is made by the first step, ReserveStock.)
 */
export const handler = sagaSteps({
  confirm: (input, now) => {
    // The order and its shards as ReserveStock left them, from the saga's state: trusted on the first
    // attempt only (if one moved on since, the transaction fails, and the attempts after it read them).
    let known: { order?: SagaStepInput['order']; shards?: SagaStepInput['shards'] } = input;
    return retryOnConflict(async () => {
      const { state, version } = known.order ?? (await loadOrder(input.orderId));
      const knownShards = known.shards;
      known = {};
      if (state.status === 'CONFIRMED') return { status: state.status };
      assertBeforeDeadline(input, now);
      const events = confirm(state, paymentIdFor(input.orderId), now);
      if (events === 'CANNOT_CONFIRM')
        throw new SagaError('ConfirmationFailed', `order ${input.orderId} is ${state.status}`);
      if (!state.heldStock)
        throw new SagaError('ConfirmationFailed', `order ${input.orderId} holds no stock`);
      // Conditional on the order's version: a cancellation (which refunds the payment in its own
      // transaction) landing meanwhile fails it, and it fails the cancellation.
      const meta = { now, correlationId: input.correlationId };
      const sold = await inventory.heldStockAppends('StockSold', state, state.heldStock, meta, knownShards);
      await inventory.append([orders.pending(input.orderId, version, events, state, meta), ...sold]);
      recordOutcome(state, 'Confirmed', now);
      return { status: 'CONFIRMED' };
    });
  },

  cancel: async (input: SagaStepInput, now) => {
    const reason = input.reason as CancellationReason;
    // An execution that lost the claim (it failed before learning so) leaves the owner's order alone.
    const owns = (order: Order) =>
      order.sagaExecutionArn === undefined || order.sagaExecutionArn === input.executionArn;
    const cancelled = await cancelOrder(
      input.orderId,
      reason,
      { now, correlationId: input.correlationId },
      owns,
    );
    if (cancelled) recordOutcome(cancelled, 'Cancelled', now, reason);
    return { cancelled: cancelled !== undefined, reason };
  },
});
