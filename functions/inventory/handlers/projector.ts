import { fromEnvironment } from '../../shared/aws';
import { projector, upsertView } from '../../shared/views';
import type { Product, ReservationState, Stock } from '../domain';
import { EXPIRY_INDEX, inventoryViewsEnvironment } from '../seams';
import { expiryPartition } from '../view';

const VIEWS_TABLE = fromEnvironment(inventoryViewsEnvironment).viewsTable;

/**
 * Keeps the product views (the product's item, and one item per stock shard
 * under the shard's own key) and the index of held reservations that the
 * expiry sweeper reads.
 */
export const handler = projector(async (event) => {
  if (!event.state) return;
  switch (event.aggregateType) {
    case 'Product':
      await upsertView(VIEWS_TABLE, event.aggregateId, 'productVersion', event.version, {
        product: event.state as Product,
      });
      return;
    case 'StockShard': {
      const productId = event.aggregateId.slice(0, event.aggregateId.lastIndexOf('#'));
      const { available, reserved, sold, received } = event.state as Stock;
      await upsertView(VIEWS_TABLE, event.aggregateId, 'version', event.version, {
        productId,
        available,
        reserved,
        sold,
        received,
      });
      return;
    }
    case 'Reservation': {
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
      return;
    }
  }
});
