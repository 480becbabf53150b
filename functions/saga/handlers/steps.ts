import { customers } from '../../accounts';
import { inventoryCommands, inventorySettings, inventoryStores } from '../../inventory';
import { type CancellationReason, type Order, ordersStore } from '../../orders';
import { paymentsStore } from '../../payments';
import { dynamoEvents } from '../../shared/aws';
import { metrics } from '../../shared/powertools';
import { type SagaObserver, sagaUseCases } from '../application';
import { SAGA_METRICS } from '../seams';
import { sagaSteps } from '../steps';

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

const emfMetrics: SagaObserver = {
  started() {
    metrics.addMetric(SAGA_METRICS.started, 'Count', 1);
    metrics.publishStoredMetrics();
  },
  confirmed: (order, now) => recordOutcome(order, 'Confirmed', now),
  cancelled: (order, now, reason) => recordOutcome(order, 'Cancelled', now, reason),
};

const saga = sagaUseCases(
  {
    orders: ordersStore(),
    payments: paymentsStore(),
    customers: customers(),
    stock: inventoryCommands(inventoryStores(), inventorySettings()),
    events: dynamoEvents,
  },
  emfMetrics,
);

/**
 * The order saga's steps, one function for all of them: each step is one
 * transaction across the modules' tables (the saga owns the cross-module
 * writes; application.ts and its use cases, one file per step), and one
 * function keeps one pool of warm sandboxes for the whole saga instead of three.
 */
export const handler = sagaSteps({
  reserve: saga.reserve,
  capture: saga.capture,
  confirm: saga.confirm,
  cancel: saga.cancel,
});
