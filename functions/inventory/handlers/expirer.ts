import type { Context } from 'aws-lambda';
import { documents, fromEnvironment } from '../../shared/aws';
import { logger, metrics, startInvocation } from '../../shared/powertools';
import { inventoryCommands } from '../application';
import { sweepExpired } from '../expiry';
import { EXPIRY_INDEX, INVENTORY_METRICS, inventoryViewsEnvironment } from '../seams';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';
import { EXPIRY_PARTITIONS } from '../view';

const commands = inventoryCommands(inventoryStores(), inventorySettings());
const VIEWS_TABLE = fromEnvironment(inventoryViewsEnvironment).viewsTable;
const { name: INDEX, partitionKey, sortKey } = EXPIRY_INDEX;
const PAGE = 200;
/**
 * A run begins no expiry in its last tenth (5 s at least): those in flight
 * then end well before the timeout. Measured: after a flash sale's 80,000
 * reservations fell due at once, every run took its whole 60 s and was
 * killed, each a failure in the sweep's failure queue.
 */
const stopAtFor = (context: Context) => {
  const remaining = context.getRemainingTimeInMillis();
  return Date.now() + remaining - Math.max(5_000, remaining / 10);
};

/** The store refused to expire a reservation the index lists as held (named by the refusal's code). */
class ExpiryRefused extends Error {
  override readonly name = 'ExpiryRefused';
}

/**
 * Runs on a schedule: finds held reservations whose `expiresAt` has passed
 * (through the sparse expiry index of the views table) and expires each one,
 * giving its stock back. Expiring is idempotent, so overlapping runs are
 * safe, and the index is the backlog itself: what one run leaves, the next
 * finds. So is a reservation whose expiry failed: the run logs it by its id,
 * counts it (ReservationExpiryFailures, alarmed) and goes on with the rest.
 */
export const handler = async (
  _scheduled: unknown,
  context: Context,
): Promise<{ expired: number; failed: number; backlog: boolean }> => {
  startInvocation(context);
  const now = new Date();
  const outcome = await sweepExpired({
    partitions: EXPIRY_PARTITIONS,
    stopAt: stopAtFor(context),
    page: async (p, startKey) => {
      const page = await documents.query({
        TableName: VIEWS_TABLE,
        IndexName: INDEX,
        KeyConditionExpression: `${partitionKey} = :p AND ${sortKey} <= :now`,
        ExpressionAttributeValues: { ':p': `p${p}`, ':now': now.toISOString() },
        Limit: PAGE,
        ExclusiveStartKey: startKey,
      });
      return { ids: (page.Items ?? []).map((item) => item.id as string), next: page.LastEvaluatedKey };
    },
    expire: async (reservationId) => {
      const released = await commands.releaseReservation(undefined, reservationId, 'EXPIRED', { now });
      // The index lists only reservations the store holds: a refusal here is a bug, counted as a failure.
      if ('rejection' in released) throw new ExpiryRefused(released.rejection.code);
      return released.ok.changed;
    },
  });
  const { expired, failed, backlog } = outcome;
  for (const failure of failed) logger.error('a reservation could not be expired', { ...failure });
  const summary = { expired, failed: failed.length, backlog };
  if (backlog) logger.warn('reservations still due, left for the next run', summary);
  else if (expired > 0 || failed.length > 0) logger.info('reservations expired', summary);
  metrics.addMetric(INVENTORY_METRICS.expired, 'Count', expired);
  metrics.addMetric(INVENTORY_METRICS.expiryFailures, 'Count', failed.length);
  metrics.publishStoredMetrics();
  return summary;
};
