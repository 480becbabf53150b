import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documents, fromEnvironment } from '../../shared/aws';
import { logger, metrics } from '../../shared/powertools';
import { inventoryCommands } from '../application';
import { EXPIRY_INDEX, inventoryViewsEnvironment } from '../seams';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';
import { EXPIRY_PARTITIONS } from '../view';

const commands = inventoryCommands(inventoryStores(), inventorySettings());
const VIEWS_TABLE = fromEnvironment(inventoryViewsEnvironment).viewsTable;
const { name: INDEX, partitionKey, sortKey } = EXPIRY_INDEX;
const PAGE = 200;

/**
 * Runs on a schedule: finds held reservations whose `expiresAt` has passed
 * (through the sparse expiry index of the views table) and expires each one,
 * giving its stock back. Expiring is idempotent, so overlapping runs are safe.
 */
export const handler = async (): Promise<{ expired: number }> => {
  const now = new Date();
  let expired = 0;
  await Promise.all(
    Array.from({ length: EXPIRY_PARTITIONS }, async (_, p) => {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await documents.send(
          new QueryCommand({
            TableName: VIEWS_TABLE,
            IndexName: INDEX,
            KeyConditionExpression: `${partitionKey} = :p AND ${sortKey} <= :now`,
            ExpressionAttributeValues: { ':p': `p${p}`, ':now': now.toISOString() },
            Limit: PAGE,
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) {
          const outcome = await commands.releaseReservation(undefined, item.id as string, 'EXPIRED', { now });
          // The index lists only reservations the store holds: a refusal here is a bug, and fails the run.
          if ('rejection' in outcome) throw new Error(`cannot expire: ${JSON.stringify(outcome.rejection)}`);
          if (outcome.ok.changed) expired++;
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
    }),
  );
  if (expired > 0) logger.info('reservations expired', { expired });
  metrics.addMetric('ReservationsExpired', 'Count', expired);
  metrics.publishStoredMetrics();
  return { expired };
};
