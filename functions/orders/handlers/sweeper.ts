import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { inventoryCommands } from '../../inventory/commands';
import { inventorySettings } from '../../inventory/settings';
import { inventoryStores } from '../../inventory/store';
import { refundPayments } from '../../payments/commands';
import { documents, env } from '../../shared/aws';
import { retryOnConflict } from '../../shared/event-store';
import { logger, metrics } from '../../shared/powertools';
import { cancel } from '../domain';
import { ordersStore } from '../store';
import { PENDING_INDEX, PENDING_PARTITIONS } from '../view';

const orders = ordersStore();
const inventory = inventoryCommands(inventoryStores(), inventorySettings());
const refundPayment = refundPayments();
const VIEWS_TABLE = env('VIEWS_TABLE');
/** A saga gets this long past its deadline to finish on its own before the sweeper steps in. */
const GRACE_MS = Number(env('SWEEPER_GRACE_SECONDS')) * 1000;

/**
 * Runs on a schedule: finds orders still PENDING well past their deadline (a
 * lost or failed execution) and cancels them with TIMEOUT, then refunds and
 * releases whatever was done for them. Cancelling first is what makes this
 * safe beside a late saga: a cancelled order can no longer be confirmed, and
 * every step after it is idempotent.
 */
export const handler = async (): Promise<{ swept: number }> => {
  const now = new Date();
  const before = new Date(now.getTime() - GRACE_MS).toISOString();
  let swept = 0;
  for (let p = 0; p < PENDING_PARTITIONS; p++) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await documents.send(
        new QueryCommand({
          TableName: VIEWS_TABLE,
          IndexName: PENDING_INDEX,
          KeyConditionExpression: 'pendingPartition = :p AND deadline < :before',
          ExpressionAttributeValues: { ':p': `p${p}`, ':before': before },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        if (await sweep(String(item.id), now)) swept++;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  if (swept > 0) logger.warn('orders swept past their deadline', { swept });
  metrics.addMetric('SagasSwept', 'Count', swept);
  metrics.publishStoredMetrics();
  return { swept };
};

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
