import type { Product, Stock } from './domain';

/**
 * The product read model: one item per product holding the product and the
 * newest projected state of each stock shard (`s0`, `s1`, …). Each shard's
 * state is self-consistent, so their sum keeps the invariant even while
 * shards are projected at different moments.
 */
export interface ProductViewItem {
  readonly id: string;
  readonly product: Product;
  readonly productVersion: number;
  readonly [shard: `s${number}`]: (Stock & { version: number }) | undefined;
}

export const shardAttribute = (shard: number) => `s${shard}` as const;

/** The shards' stock, or undefined while some shard (or the product) has not been projected. */
export function shardsOf(view: ProductViewItem): Stock[] | undefined {
  if (!view.product) return undefined;
  const shards: Stock[] = [];
  for (let i = 0; i < view.product.shardCount; i++) {
    const s = view[shardAttribute(i)];
    if (!s) return undefined;
    shards.push(s);
  }
  return shards;
}

/** Reservations still held are indexed by expiry, spread over this many index partitions. */
export const EXPIRY_PARTITIONS = 16;
export const EXPIRY_INDEX = 'byExpiry';

export function expiryPartition(reservationId: string): string {
  let hash = 0;
  for (const c of reservationId) hash = (hash * 31 + c.charCodeAt(0)) | 0;
  return `p${Math.abs(hash) % EXPIRY_PARTITIONS}`;
}
