import { fromEnvironment } from '../../shared/aws';
import { logger } from '../../shared/powertools';
import { type EventRecord, eachProjected, projector, upsertEntries, upsertView } from '../../shared/views';
import type { Product, ReservationState, Stock } from '../domain';
import { EXPIRY_INDEX, inventoryViewsEnvironment } from '../seams';
import { expiryPartition, shardAttribute, shardEntry } from '../view';

const VIEWS_TABLE = fromEnvironment(inventoryViewsEnvironment).viewsTable;

/** A shard aggregate's id is `<productId>#<shard>`. */
const shardOf = (aggregateId: string) => {
  const at = aggregateId.lastIndexOf('#');
  return { productId: aggregateId.slice(0, at), shard: Number(aggregateId.slice(at + 1)) };
};

/**
 * Keeps the product views (one item per product: the product, and each stock
 * shard's newest state under its own attribute, see view.ts) and the index of
 * held reservations that the expiry sweeper reads. The shards of one product
 * changed in a batch are written together, with one UpdateItem.
 */
export const handler = projector(async (events) => {
  const shardsByProduct = new Map<string, EventRecord[]>();
  const failed = await eachProjected(events, async (event) => {
    // Only the last event of an append carries the state; a refused creation's item carries none.
    if (!event.state) return;
    switch (event.aggregateType) {
      case 'Product':
        await upsertView(VIEWS_TABLE, event.aggregateId, 'productVersion', event.version, {
          product: event.state as Product,
        });
        return;
      case 'StockShard': {
        const { productId } = shardOf(event.aggregateId);
        shardsByProduct.set(productId, [...(shardsByProduct.get(productId) ?? []), event]);
        return;
      }
      case 'Reservation':
        await projectReservation(event);
        return;
    }
  });
  await Promise.all(
    [...shardsByProduct].map(async ([productId, shards]) => {
      try {
        await upsertEntries(
          VIEWS_TABLE,
          productId,
          shards.map((event) => ({
            attribute: shardAttribute(shardOf(event.aggregateId).shard),
            version: event.version,
            entry: shardEntry(event.version, event.state as Stock),
          })),
        );
      } catch (error) {
        logger.error('projection failed', { productId, shards: shards.length, error: error as Error });
        failed.push(...shards.map((event) => event.aggregateId));
      }
    }),
  );
  return { failed };
});

async function projectReservation(event: EventRecord) {
  const r = event.state as NonNullable<ReservationState>;
  const held = r.status === 'RESERVED';
  await upsertView(
    VIEWS_TABLE,
    r.reservationId,
    'version',
    event.version,
    {
      productId: r.productId,
      status: r.status,
      // A voided reservation (stored by earlier versions) took no stock: its expiry is when it was voided.
      expiresAt: r.status === 'VOIDED' ? r.voidedAt : r.expiresAt,
      ...(held ? { [EXPIRY_INDEX.partitionKey]: expiryPartition(r.reservationId) } : {}),
    },
    held ? [] : [EXPIRY_INDEX.partitionKey],
  );
}
