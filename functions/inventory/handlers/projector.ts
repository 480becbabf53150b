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
      await upsertShard(productId, attribute, event.version, event.state as Stock);
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

/** Shard states nest under one attribute each, so the version guard is on `sN.version`. */
async function upsertShard(productId: string, attribute: string, version: number, stock: Stock) {
  await upsertView(VIEWS_TABLE, productId, `${attribute}Version`, version, {
    [attribute]: { ...stock, version },
  });
}
