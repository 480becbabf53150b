import { partitionOf } from '../shared/ids';
import type { Product, Stock } from './domain';

/**
 * The product read model. The product's item (keyed by its id) holds what
 * never changes once created; each stock shard has an item of its own, keyed
 * like the shard aggregate (`<productId>#<shard>`), holding its newest
 * projected state. A flash sale's writes to the views table then spread over
 * as many partition keys as the product has shards, instead of all landing on
 * the product's item. Each shard's state is self-consistent, so their sum
 * keeps the invariant even while shards are projected at different moments.
 */
export interface ProductViewItem {
  readonly id: string;
  readonly product: Product;
  readonly productVersion: number;
}

export interface ShardViewItem extends Stock {
  readonly id: string;
  readonly productId: string;
  readonly version: number;
}

/** Reservations still held are indexed by expiry (EXPIRY_INDEX), spread over this many index partitions. */
export const EXPIRY_PARTITIONS = 16;

export const expiryPartition = (reservationId: string) => partitionOf(reservationId, EXPIRY_PARTITIONS);
