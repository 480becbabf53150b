import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { inventoryCommands } from '../../inventory/commands';
import { inventorySettings } from '../../inventory/settings';
import { inventoryStores } from '../../inventory/store';
import { refundPayments } from '../../payments/commands';
import { documents, env } from '../../shared/aws';
import { KEY, retryOnConflict } from '../../shared/event-store';
import { logger, metrics } from '../../shared/powertools';
import { cancel, FINAL_FROM_VERSION } from '../domain';
import { ordersStore, PLACED_INDEX, SWEEP_PARTITIONS } from '../store';

const orders = ordersStore();
const inventory = inventoryCommands(inventoryStores(), inventorySettings());
const refundPayment = refundPayments();
const ORDERS_TABLE = orders.tableName;
/** A saga gets this long past its deadline to finish on its own before the sweeper steps in. */
const GRACE_MS = Number(env('SWEEPER_GRACE_SECONDS')) * 1000;
/** Where a sweeper with no cursor yet starts: orders older than this are not looked at. */
const FIRST_LOOKBACK_MS = 60 * 60 * 1000;
/** The sweeper's cursor: an item outside every aggregate (version 0 is never an event). */
const CURSOR_KEY = { [KEY.partition]: '_sweeper', [KEY.sort]: 0 };
const BATCH_GET_LIMIT = 100;

/**
 * Runs on a schedule: reads the orders whose deadline (plus the grace) passed
 * since the last sweep, and cancels with TIMEOUT those still PENDING (a lost
 * or failed execution), then refunds and releases whatever was done for them.
 * Cancelling first is what makes this safe beside a late saga: a cancelled
 * order can no longer be confirmed, and every step after it is idempotent.
 *
 * Each order is looked at once, after its deadline: most are final by then,
 * which one BatchGetItem of their final event shows for a hundred at a time.
 */
export const handler = async (): Promise<{ swept: number }> => {
  const now = new Date();
  const upTo = new Date(now.getTime() - GRACE_MS).toISOString();
  const cursor = await documents.send(
    new GetCommand({ TableName: ORDERS_TABLE, Key: CURSOR_KEY, ConsistentRead: true }),
  );
  const from =
    (cursor.Item?.sweptUpTo as string | undefined) ??
    new Date(now.getTime() - GRACE_MS - FIRST_LOOKBACK_MS).toISOString();
  if (from >= upTo) return { swept: 0 };
  const due = await placedBetween(from, upTo);
  const open = await notFinal(due);
  let swept = 0;
  for (const orderId of open) {
    if (await sweep(orderId, now)) swept++;
  }
  // Moved on only once every due order was swept: a failed sweep is read again next time.
  await documents
    .send(
      new UpdateCommand({
        TableName: ORDERS_TABLE,
        Key: CURSOR_KEY,
        UpdateExpression: 'SET sweptUpTo = :upTo',
        ConditionExpression: 'attribute_not_exists(sweptUpTo) OR sweptUpTo < :upTo',
        ExpressionAttributeValues: { ':upTo': upTo },
      }),
    )
    .catch((error: Error) => {
      if (error.name !== 'ConditionalCheckFailedException') throw error;
    });
  if (swept > 0) logger.warn('orders swept past their deadline', { swept });
  metrics.addMetric('SagasSwept', 'Count', swept);
  metrics.publishStoredMetrics();
  return { swept };
};

/** The ids of orders whose deadline is in (from, upTo]. */
async function placedBetween(from: string, upTo: string): Promise<string[]> {
  const ids: string[] = [];
  for (let p = 0; p < SWEEP_PARTITIONS; p++) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await documents.send(
        new QueryCommand({
          TableName: ORDERS_TABLE,
          IndexName: PLACED_INDEX,
          KeyConditionExpression: 'sweepPartition = :p AND deadline BETWEEN :from AND :upTo',
          ExpressionAttributeValues: { ':p': `p${p}`, ':from': from, ':upTo': upTo },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        // BETWEEN is inclusive; the previous sweep took `from` itself.
        if (item.deadline !== from) ids.push(String(item[KEY.partition]));
      }
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
  const meta = { now, correlationId: orderId };
  const cancelled = await retryOnConflict(async () => {
    const { state, version } = await orders.load(orderId);
    if (state?.status !== 'PENDING') return undefined;
    await orders.append(orderId, version, cancel(state, 'TIMEOUT', now), state, meta);
    return state;
  });
  if (!cancelled) return false;
  await refundPayment(orderId, meta);
  await inventory.releaseForOrder(orderId, cancelled.items, meta);
  return true;
}
