import { captureCredit, customers } from '../accounts';
import { inventoryCommands, inventorySettings, inventoryStores, shardsAfter } from '../inventory';
import {
  beginSaga,
  type CancellationReason,
  confirm,
  type Order,
  orderFold,
  ordersStore,
  reserveStock,
} from '../orders';
import { paymentIdFor, paymentsStore, paymentUndoing, settle } from '../payments';
import { documents } from '../shared/aws';
import { appendAtomically, retryOnConflict } from '../shared/event-store';
import { foldEvents } from '../shared/events';
import { metrics } from '../shared/powertools';
import { orderCancellation } from './cancellation';
import type { StepInput } from './contract';
import { SAGA_METRICS } from './seams';
import { assertBeforeDeadline, SagaError, sagaSteps } from './steps';

const orders = ordersStore();
const inventory = inventoryCommands(inventoryStores(), inventorySettings());
const payments = paymentsStore();
const accounts = customers();
const cancelOrder = orderCancellation(orders, inventory, paymentUndoing(payments, accounts));

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
  metrics.addMetric(outcome === 'Confirmed' ? SAGA_METRICS.confirmed : SAGA_METRICS.cancelled, 'Count', 1);
  if (reason) {
    const byReason = metrics.singleMetric();
    byReason.addDimension('reason', reason);
    byReason.addMetric(SAGA_METRICS.cancelledByReason, 'Count', 1);
  }
  metrics.addMetric(SAGA_METRICS.durationMs, 'Milliseconds', now.getTime() - Date.parse(order.createdAt));
  metrics.publishStoredMetrics();
}

/**
 * The order saga's steps, one function for all of them: each step is one
 * transaction across the modules' tables (the saga owns the cross-module
 * writes), and one function keeps one pool of warm sandboxes for the whole
 * saga instead of three.
 */
export const handler = sagaSteps({
  /**
   * Claims the order for this execution and takes the stock of every item,
   * all or nothing, in one transaction of the order's `OrderStockReserved` and
   * the shards' `StockReserved`. The first execution to claim a pending order
   * runs its saga, and so does that same execution on a retry; any other (the
   * request and the bus both start one) stops here, having done nothing. An
   * order short of stock is claimed alone (`OrderSagaStarted`) before the
   * refusal, so that the other execution stops too.
   */
  reserve: (input, now) =>
    retryOnConflict(async () => {
      const { executionArn } = input;
      const meta = { now, correlationId: input.correlationId };
      const { state, version } = await loadOrder(input.orderId);
      const claimedByOther = state.sagaExecutionArn !== undefined && state.sagaExecutionArn !== executionArn;
      if (claimedByOther || state.status !== 'PENDING') return { proceed: false as const };
      // ConfirmOrder takes the order from here, as it now is (a stale one fails its transaction).
      if (state.heldStock) return { proceed: true as const, order: { state, version }, shards: [] };
      assertBeforeDeadline(input, now);
      const planned = await inventory.planOrderStock(input.orderId, input.items, meta);
      if ('outOfStock' in planned) {
        await orders.append(input.orderId, version, beginSaga(state, executionArn).events, state, meta);
        throw new SagaError('OutOfStock', `not enough stock of ${planned.outOfStock.join(', ')}`);
      }
      const events = reserveStock(state, executionArn, planned.parts);
      if (events === 'CANNOT_RESERVE') return { proceed: false as const };
      await inventory.append([
        orders.pending(input.orderId, version, events, state, meta),
        ...planned.appends,
      ]);
      if (state.sagaExecutionArn === undefined) {
        metrics.addMetric(SAGA_METRICS.started, 'Count', 1);
        metrics.publishStoredMetrics();
      }
      const reserved = foldEvents(orderFold, state, events);
      if (!reserved) throw new Error(`order ${input.orderId} folded to nothing`);
      return {
        proceed: true as const,
        order: { state: reserved, version: version + 1 },
        shards: shardsAfter(planned.appends),
      };
    }),

  /**
   * Captures the order's total against the customer's credit. One payment per
   * order (its id derives from the order's), so a repeated capture finds the
   * first; the capture and the customer's credit change are one transaction,
   * conditional on the customer's version, so concurrent orders of one
   * customer cannot together exceed the limit.
   */
  capture: (input, now) => {
    // The first attempt writes the payment as new without reading it (a repeat finds it there and fails the
    // write); the attempts after a lost race read it.
    let firstAttempt = true;
    return retryOnConflict(async () => {
      const paymentId = paymentIdFor(input.orderId);
      const [existing, customer] = await Promise.all([
        firstAttempt ? { state: null, version: 0 } : payments.load(paymentId),
        accounts.load(input.customerId),
      ]);
      firstAttempt = false;
      if (existing.state?.status === 'CAPTURED') return { paymentId };
      if (existing.state)
        throw new SagaError('PaymentDeclined', `payment ${paymentId} is ${existing.state.status}`);
      assertBeforeDeadline(input, now);
      if (!customer.state)
        throw new SagaError('PaymentDeclined', `customer ${input.customerId} does not exist`);
      const payment = { paymentId, orderId: input.orderId, amountCents: input.totalCents };
      const decision = captureCredit(customer.state, payment);
      const facts = { ...payment, customerId: input.customerId };
      const meta = { now, correlationId: input.correlationId };
      const paymentAppend = payments.pending(paymentId, 0, settle(facts, decision.accepted, now), null, meta);
      if (!decision.accepted) {
        await appendAtomically(documents, [paymentAppend]);
        throw new SagaError(
          'PaymentDeclined',
          `${input.totalCents} exceeds the available credit of ${input.customerId}`,
        );
      }
      await appendAtomically(documents, [
        paymentAppend,
        accounts.pending(input.customerId, customer.version, decision.events, customer.state, meta),
      ]);
      return { paymentId };
    });
  },

  /** Confirms the order; its stock becomes sold in the same transaction. */
  confirm: (input, now) => {
    // The order and its shards as ReserveStock left them, from the saga's state: trusted on the first
    // attempt only (if one moved on since, the transaction fails, and the attempts after it read them).
    let known: Pick<StepInput<'confirm'>, 'order' | 'shards'> = input;
    return retryOnConflict(async () => {
      const { state, version } = known.order ?? (await loadOrder(input.orderId));
      const knownShards = known.shards;
      known = {};
      if (state.status === 'CONFIRMED') return { status: 'CONFIRMED' as const };
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
      return { status: 'CONFIRMED' as const };
    });
  },

  /**
   * Compensation: cancels the order with its reason, undoing in the same
   * transaction whatever was done for it (its stock given back, its payment
   * refunded or voided).
   */
  cancel: async (input, now) => {
    const { reason } = input;
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
