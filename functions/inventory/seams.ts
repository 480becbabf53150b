/** The inventory module's seams with the CDK app (see functions/shared/seams.ts). */
import {
  ADMIN_ONLY,
  environment,
  type IndexSeam,
  numeric,
  type RouteScopes,
  SHOP_OR_ADMIN,
  text,
} from '../shared/seams';

/** The inventory's functions' Powertools service (the `service` dimension of their metrics). */
export const INVENTORY_SERVICE = 'inventory';

/** The inventory's EMF metrics that the alarms watch (lib/observability/), by name. */
export const INVENTORY_METRICS = {
  /** Reservations the expiry sweeper expired. */
  expired: 'ReservationsExpired',
  /** Reservations whose expiry failed: still held, still due, taken up by the next run. */
  expiryFailures: 'ReservationExpiryFailures',
} as const;

export const INVENTORY_ROUTES = {
  createProduct: 'POST /products',
  getProduct: 'GET /products/{productId}',
  reserveStock: 'POST /products/{productId}/reservations',
  releaseReservation: 'DELETE /products/{productId}/reservations/{reservationId}',
  restockProduct: 'POST /products/{productId}/restock',
} as const;

/** Who may call each route (the JWT authorizer's scopes): the catalogue and its stock are the operators'. */
export const INVENTORY_ROUTE_SCOPES: RouteScopes<typeof INVENTORY_ROUTES> = {
  createProduct: ADMIN_ONLY,
  getProduct: SHOP_OR_ADMIN,
  reserveStock: SHOP_OR_ADMIN,
  releaseReservation: SHOP_OR_ADMIN,
  restockProduct: ADMIN_ONLY,
};

/** What every function issuing inventory commands needs: the event table and the stage's stock settings. */
export const inventoryCommandEnvironment = environment({
  inventoryTable: text('INVENTORY_TABLE'),
  reservationTtlSeconds: numeric('RESERVATION_TTL_SECONDS'),
  unitsPerShard: numeric('STOCK_UNITS_PER_SHARD'),
  maxShards: numeric('MAX_STOCK_SHARDS'),
  /** The most units of one product a shop caller may hold in live reservations (admins are not limited). */
  holdLimitPerCaller: numeric('HOLD_LIMIT_PER_CALLER'),
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
