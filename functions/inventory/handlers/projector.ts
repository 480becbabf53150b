import { env } from '../../shared/aws';
import { projector, upsertView } from '../../shared/views';
import type { Product, Reservation, Stock } from '../domain';
import { expiryPartition, shardAttribute } from '../view';

const VIEWS_TABLE = env('VIEWS_TABLE');

/**
 * Keeps the product views (product plus each shard's stock) and the index of
 * held reservations that the expiry sweeper reads.
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
      const separator = event.aggregateId.lastIndexOf('#');
      const productId = event.aggregateId.slice(0, separator);
      const attribute = shardAttribute(Number(event.aggregateId.slice(separator + 1)));
      // Each shard nests under its own attribute, guarded by its own `sNVersion`.
      await upsertView(VIEWS_TABLE, productId, `${attribute}Version`, event.version, {
        [attribute]: { ...(event.state as Stock), version: event.version },
      });
      return;
    }
    case 'Reservation': {
      const r = event.state as Reservation;
      const held = r.status === 'RESERVED';
      await upsertView(
        VIEWS_TABLE,
        r.reservationId,
        'version',
        event.version,
        {
          productId: r.productId,
          status: r.status,
          expiresAt: r.expiresAt,
          ...(held ? { expiryPartition: expiryPartition(r.reservationId) } : {}),
        },
        held ? [] : ['expiryPartition'],
      );
      return;
    }
  }
});
