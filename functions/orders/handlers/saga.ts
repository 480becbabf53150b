import { inventoryCommands } from '../../inventory/commands';
import { inventorySettings } from '../../inventory/settings';
import { inventoryStores } from '../../inventory/store';
import { paymentIdFor } from '../../payments/domain';
import { paymentsStore } from '../../payments/store';
import { documents } from '../../shared/aws';
import { appendAtomically, retryOnConflict } from '../../shared/event-store';
import { metrics } from '../../shared/powertools';
import { assertBeforeDeadline, SagaError, type SagaStepInput, sagaSteps } from '../../shared/saga';
import { type CancellationReason, cancel, confirm, type Order } from '../domain';
import { ordersStore } from '../store';

const orders = ordersStore();
const payments = paymentsStore();
const inventory = inventoryCommands(inventoryStores(), inventorySettings());

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
    // What the earlier steps wrote, from the saga's state: trusted on the first attempt only (a stale
    // version fails the transaction, and the attempts after a lost race read everything again).
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
      const meta = { now, correlationId: input.correlationId };
      const commits = await inventory.commitAppendsForOrder(
        input.orderId,
        input.items,
        meta,
        trusted?.reserved,
      );
      if (!commits)
        throw new SagaError('ConfirmationFailed', `a reservation of ${input.orderId} is no longer held`);
      await appendAtomically(documents, [
        orders.pending(input.orderId, version, events, state, meta),
        payments.unchanged(paymentId, paymentVersion),
        ...commits,
      ]);
      recordOutcome(state, 'Confirmed', now);
      return { status: 'CONFIRMED' };
    });
  },

  cancel: async (input: SagaStepInput, now) => {
    const meta = { now, correlationId: input.correlationId };
    const cancelled = await retryOnConflict(async () => {
      const { state, version } = await loadOrder(input.orderId);
      // An execution that lost the claim (it failed before learning so) leaves the owner's saga alone.
      if (state.sagaExecutionArn !== undefined && state.sagaExecutionArn !== input.executionArn)
        return { status: state.status, reason: undefined, owner: false };
      const reason = input.reason as CancellationReason;
      const payment = await payments.load(paymentIdFor(input.orderId));
      const paymentId =
        payment.state && payment.state.status !== 'VOIDED' ? payment.state.paymentId : undefined;
      const events = cancel(state, reason, now, paymentId);
      await orders.append(input.orderId, version, events, state, meta);
      if (events.length > 0) recordOutcome(state, 'Cancelled', now, reason);
      return { status: state.status === 'CONFIRMED' ? 'CONFIRMED' : 'CANCELLED', reason, owner: true };
    });
    // A cancelled order holds no stock, whichever path led here (out of stock skips ReleaseStock):
    // what is still held is released, and what was never made is voided so it cannot land later.
    if (cancelled.owner && cancelled.status === 'CANCELLED')
      await inventory.releaseForOrder(input.orderId, input.items, meta);
    return cancelled;
  },
});
