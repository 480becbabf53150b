/** The inventory module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, type IndexSeam, numeric, text } from '../shared/seams';

export const INVENTORY_ROUTES = {
  createProduct: 'POST /products',
  getProduct: 'GET /products/{productId}',
  reserveStock: 'POST /products/{productId}/reservations',
  releaseReservation: 'DELETE /products/{productId}/reservations/{reservationId}',
  restockProduct: 'POST /products/{productId}/restock',
} as const;

/** What every function issuing inventory commands needs: the event table and the stage's stock settings. */
export const inventoryCommandEnvironment = environment({
  inventoryTable: text('INVENTORY_TABLE'),
  reservationTtlSeconds: numeric('RESERVATION_TTL_SECONDS'),
  unitsPerShard: numeric('STOCK_UNITS_PER_SHARD'),
  maxShards: numeric('MAX_STOCK_SHARDS'),
});

/** What a function reading or writing the inventory's read models needs. */
export const inventoryViewsEnvironment = environment({ viewsTable: text('VIEWS_TABLE') });

/**
 * The sparse index of held reservations by expiry on the views table, which
 * the expiry sweeper queries: only reservations still held carry its
 * partition key (functions/inventory/handlers/projector.ts).
 */
export const EXPIRY_INDEX: IndexSeam = {
  name: 'byExpiry',
  partitionKey: 'expiryPartition',
  sortKey: 'expiresAt',
};
