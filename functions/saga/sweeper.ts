import { BatchGetCommand, type BatchGetCommandOutput, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { customers } from '../accounts';
import { inventoryCommands, inventorySettings, inventoryStores } from '../inventory';
import { FINAL_FROM_VERSION, ordersStore, PLACED_INDEX, SWEEP_PARTITIONS } from '../orders';
import { paymentsStore } from '../payments';
import { documents, dynamoEvents, fromEnvironment } from '../shared/aws';
import { KEY } from '../shared/event-store';
import { logger, metrics, startInvocation } from '../shared/powertools';
import { sagaUseCases } from './application';
import { SAGA_METRICS, sweeperEnvironment } from './seams';

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
  // The sweeper counts what it swept (SagasSwept), not saga outcomes.
  noOutcomeMetrics,
);
const ORDERS_TABLE = orders.tableName;
/** A saga gets this long past its deadline to finish on its own before the sweeper steps in. */
const GRACE_MS = fromEnvironment(sweeperEnvironment).sweeperGraceSeconds * 1000;
/**
 * How far back each sweep looks: twice the schedule's rate, so that a sweep
 * that runs late still meets the one before it.
 */
const WINDOW_MS = 2 * 60 * 1000;
const BATCH_GET_LIMIT = 100;

/**
 * Runs on a schedule: finds the orders whose deadline (plus the grace) fell
 * in this sweep's window, and cancels with TIMEOUT those still PENDING (a lost
 * or failed execution), releasing their stock and refunding their payment in
 * the same transaction: a cancelled order can no longer be confirmed, and no
 * saga step still in flight for it can land.
 *
 * The window ends at the scheduled event's own time, not the clock's: a sweep
 * that failed and is retried, or redriven from the dead-letter queue later,
 * sweeps the very window it was scheduled for, so no order falls between two
 * sweeps. Most orders are final by then, which one BatchGetItem of their
 * final event shows for a hundred at a time.
 */
export const handler = async (
  scheduled?: { time?: string },
  context?: Context,
): Promise<{ swept: number }> => {
  startInvocation(context);
  const now = new Date();
  const at = scheduled?.time ? new Date(scheduled.time) : now;
  const upTo = new Date(at.getTime() - GRACE_MS).toISOString();
  const from = new Date(at.getTime() - GRACE_MS - WINDOW_MS).toISOString();
  const open = await notFinal(await placedBetween(from, upTo));
  let swept = 0;
  for (const orderId of open) {
    if (await sweep(orderId, now)) swept++;
  }
  if (swept > 0) logger.warn('orders swept past their deadline', { swept });
  metrics.addMetric(SAGA_METRICS.swept, 'Count', swept);
  metrics.publishStoredMetrics();
  return { swept };
};

/** The ids of orders whose deadline is in [from, upTo]. */
async function placedBetween(from: string, upTo: string): Promise<string[]> {
  const ids: string[] = [];
  for (let p = 0; p < SWEEP_PARTITIONS; p++) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await documents.send(
        new QueryCommand({
          TableName: ORDERS_TABLE,
          IndexName: PLACED_INDEX.name,
          KeyConditionExpression: `${PLACED_INDEX.partitionKey} = :p AND ${PLACED_INDEX.sortKey} BETWEEN :from AND :upTo`,
          ExpressionAttributeValues: { ':p': `p${p}`, ':from': from, ':upTo': upTo },
          ExclusiveStartKey: startKey,
        }),
      );
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
      const result: BatchGetCommandOutput = await documents.send(
        new BatchGetCommand({
          RequestItems: { [ORDERS_TABLE]: { Keys: keys, ProjectionExpression: KEY.partition } },
        }),
      );
      for (const item of result.Responses?.[ORDERS_TABLE] ?? []) final.add(String(item[KEY.partition]));
      keys = result.UnprocessedKeys?.[ORDERS_TABLE]?.Keys;
    }
  }
  return orderIds.filter((id) => !final.has(id));
}

async function sweep(orderId: string, now: Date): Promise<boolean> {
  return (await cancelOrder(orderId, 'TIMEOUT', { now, correlationId: orderId })) !== undefined;
}
