import type { Context } from 'aws-lambda';
import { customers } from '../../accounts';
import { inventoryCommands, inventorySettings, inventoryStores } from '../../inventory';
import { FINAL_FROM_VERSION, ordersStore, PLACED_INDEX, SWEEP_PARTITIONS } from '../../orders';
import { paymentsStore } from '../../payments';
import { documents, dynamoEvents, fromEnvironment } from '../../shared/aws';
import { KEY } from '../../shared/event-store';
import { logger, metrics, startInvocation } from '../../shared/powertools';
import { sagaUseCases } from '../application';
import { SAGA_METRICS, sweeperEnvironment } from '../seams';
import { sweepLostSagas, sweepWindow } from '../sweep';

const orders = ordersStore();
const noOutcomeMetrics = { started() {}, confirmed() {}, cancelled() {} };
const { cancelOrder } = sagaUseCases(
  {
    orders,
    payments: paymentsStore(),
    customers: customers(),
    stock: inventoryCommands(inventoryStores(), inventorySettings()),
    events: dynamoEvents,
  },
  // The sweeper counts what it swept (SweeperCancellations), not saga outcomes.
  noOutcomeMetrics,
);
const ORDERS_TABLE = orders.tableName;
/** A saga gets this long past its deadline to finish on its own before the sweeper steps in. */
const GRACE_MS = fromEnvironment(sweeperEnvironment).sweeperGraceSeconds * 1000;
const BATCH_GET_LIMIT = 100;

/** A sweep begins no cancellation in its last tenth (5 s at least): those under way end before the timeout. */
const stopAtFor = (context: Context | undefined) => {
  if (!context) return Number.POSITIVE_INFINITY;
  const remaining = context.getRemainingTimeInMillis();
  return Date.now() + remaining - Math.max(5_000, remaining / 10);
};

/** A sweep that left orders of its window PENDING: failing the invocation has Lambda sweep the window again. */
class SweepIncomplete extends Error {
  override readonly name = 'SweepIncomplete';
}

/**
 * Runs on a schedule: finds the orders whose deadline (plus the grace) fell
 * in this sweep's window (see `sweepWindow`), and cancels with TIMEOUT those
 * still PENDING (a lost or failed execution), releasing their stock and
 * refunding their payment in the same transaction: a cancelled order can no
 * longer be confirmed, and no saga step still in flight for it can land.
 * Most orders are final by then, which one BatchGetItem of their final event
 * shows for a hundred at a time.
 *
 * Each order is cancelled on its own (see `sweepLostSagas`): one that fails
 * is counted (SweeperFailures) and logged by its id, and the sweep goes on.
 * When one failed or was left for want of time, the invocation fails once
 * everything else is done: Lambda then retries the same scheduled event,
 * whose window holds the order still, and after the retries the event waits
 * in the sweep's dead-letter queue (alarmed) for a redrive that sweeps that
 * window again. Every cancellation made is counted (SweeperCancellations):
 * each is a saga that did not finish on its own, and is alarmed.
 */
export const handler = async (
  scheduled?: { time?: string },
  context?: Context,
): Promise<{ swept: number }> => {
  startInvocation(context);
  const now = new Date();
  const { from, upTo } = sweepWindow(scheduled?.time ? new Date(scheduled.time) : now, GRACE_MS);
  const outcome = await sweepLostSagas({
    open: async () => notFinal(await placedBetween(from, upTo)),
    cancel: async (orderId) =>
      (await cancelOrder(orderId, 'TIMEOUT', { now, correlationId: orderId })) !== undefined,
    stopAt: stopAtFor(context),
  });
  const { cancelled, failed, left } = outcome;
  for (const failure of failed) logger.error('the sweeper could not cancel an order', { ...failure });
  if (cancelled.length > 0) logger.warn('orders swept past their deadline', { swept: cancelled.length });
  metrics.addMetric(SAGA_METRICS.sweeperCancellations, 'Count', cancelled.length);
  metrics.addMetric(SAGA_METRICS.sweeperFailures, 'Count', failed.length);
  metrics.publishStoredMetrics();
  if (!outcome.complete) {
    // The errors' names (what an operator, and the chaos run's dead-letter check, explain a failure by);
    // the orders' ids are in the log lines above.
    const errors = [...new Set(failed.map((f) => f.error))].join(', ');
    throw new SweepIncomplete(
      `${failed.length} cancellations failed (${errors || 'none'}) and ${left.length} were not begun in time, in the window ${from}..${upTo}: it is swept again`,
    );
  }
  return { swept: cancelled.length };
};

/** The ids of orders whose deadline is in [from, upTo]. */
async function placedBetween(from: string, upTo: string): Promise<string[]> {
  const ids: string[] = [];
  for (let p = 0; p < SWEEP_PARTITIONS; p++) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await documents.query({
        TableName: ORDERS_TABLE,
        IndexName: PLACED_INDEX.name,
        KeyConditionExpression: `${PLACED_INDEX.partitionKey} = :p AND ${PLACED_INDEX.sortKey} BETWEEN :from AND :upTo`,
        ExpressionAttributeValues: { ':p': `p${p}`, ':from': from, ':upTo': upTo },
        ExclusiveStartKey: startKey,
      });
      for (const item of page.Items ?? []) ids.push(String(item[KEY.partition]));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  return ids;
}

/** Those of `orderIds` that have no event at FINAL_FROM_VERSION, so may still be pending. */
async function notFinal(orderIds: readonly string[]): Promise<string[]> {
  const final = new Set<string>();
  for (let start = 0; start < orderIds.length; start += BATCH_GET_LIMIT) {
    let keys: Record<string, unknown>[] | undefined = orderIds
      .slice(start, start + BATCH_GET_LIMIT)
      .map((id) => ({ [KEY.partition]: id, [KEY.sort]: FINAL_FROM_VERSION }));
    while (keys && keys.length > 0) {
      const result = await documents.batchGet({
        RequestItems: { [ORDERS_TABLE]: { Keys: keys, ProjectionExpression: KEY.partition } },
      });
      for (const item of result.Responses?.[ORDERS_TABLE] ?? []) final.add(String(item[KEY.partition]));
      keys = result.UnprocessedKeys?.[ORDERS_TABLE]?.Keys;
    }
  }
  return orderIds.filter((id) => !final.has(id));
}
