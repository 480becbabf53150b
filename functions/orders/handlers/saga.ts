import { inventoryCommands } from '../../inventory/commands';
import { inventorySettings } from '../../inventory/settings';
import { inventoryStores } from '../../inventory/store';
import { paymentIdFor } from '../../payments/domain';
import { paymentsStore } from '../../payments/store';
import { retryOnConflict } from '../../shared/event-store';
import { metrics } from '../../shared/powertools';
import { assertBeforeDeadline, SagaError, type SagaStepInput, sagaSteps } from '../../shared/saga';
import { orderCancellation } from '../cancellation';
import { type CancellationReason, confirm, type Order } from '../domain';
import { ordersStore } from '../store';

const orders = ordersStore();
const payments = paymentsStore();
const inventory = inventoryCommands(inventoryStores(), inventorySettings());
const cancelOrder = orderCancellation(orders, payments, inventory);

async function loadOrder(orderId: string) {
  const loaded = await orders.load(orderId);
  if (!loaded.state) throw new Error(`order ${orderId} does not exist`);
  return { state: loaded.state, version: loaded.version };
}

async function capturedPaymentVersion(paymentId: string) {
  const payment = await payments.load(paymentId);
  if (payment.state?.status !== 'CAPTURED')
    throw new SagaError(
      'ConfirmationFailed',
      `payment ${paymentId} is ${payment.state?.status ?? 'missing'}`,
    );
  return payment.version;
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
 * The saga's order steps: confirm the order (its reservations become sold
 * stock in the same transaction), or cancel it with its reason. (The claim of
 * the order for one execution is made by the first step, ReserveStock.)
 */
export const handler = sagaSteps({
  confirm: (input, now) => {
    // The payment's version as CapturePayment wrote it: trusted on the first attempt only (a stale
    // version fails the transaction, and the attempts after a lost race read it again).
    let known = input.known;
    return retryOnConflict(async () => {
      const trusted = known;
      known = undefined;
      const { state, version } = await loadOrder(input.orderId);
      if (state.status === 'CONFIRMED') return { status: state.status };
      assertBeforeDeadline(input, now);
      const paymentId = paymentIdFor(input.orderId);
      const events = confirm(state, paymentId, now);
      if (events === 'CANNOT_CONFIRM')
        throw new SagaError('ConfirmationFailed', `order ${input.orderId} is ${state.status}`);
      // Confirmation is conditional on the payment as captured: a refund landing meanwhile fails it.
      const paymentVersion = trusted?.paymentVersion ?? (await capturedPaymentVersion(paymentId));
      if (!state.heldStock)
        throw new SagaError('ConfirmationFailed', `order ${input.orderId} holds no stock`);
      const meta = { now, correlationId: input.correlationId };
      const sold = await inventory.heldStockAppends('StockSold', state.heldStock, meta);
      await inventory.append([
        orders.pending(input.orderId, version, events, state, meta),
        payments.unchanged(paymentId, paymentVersion),
        ...sold,
      ]);
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
