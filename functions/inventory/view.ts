import { partitionOf } from '../shared/ids';
import type { Product, Stock } from './domain';

/**
 * The product read model: one item per product, keyed by its id, holding
 * what never changes once created (`product`, `productVersion`) and, under
 * one top-level attribute per stock shard (`s0`, `s1`, …), that shard's
 * newest projected state. A `GET /products/{id}` reads this one item however
 * many shards the product has, and the projector writes a batch's changes of
 * a product's shards with one UpdateItem. Each shard's state is
 * self-consistent, so their sum keeps the invariant even while shards are
 * projected at different moments.
 *
 * A shard's entry uses one-letter names, so that a product of 64 shards
 * stays a small item (measured: 1,846 bytes of shard entries, 2,062 with the
 * product; a read is half a unit, a batch's write three): `v` the shard's
 * version, `a` available, `r` reserved, `s` sold, `n` received.
 */
export interface ProductViewItem {
  readonly id: string;
  readonly product?: Product;
  readonly productVersion?: number;
  readonly [shardAttribute: `s${number}`]: ShardEntry | undefined;
}

export interface ShardEntry {
  readonly v: number;
  readonly a: number;
  readonly r: number;
  readonly s: number;
  readonly n: number;
}

/** The attribute holding a shard's entry on its product's view item. */
export const shardAttribute = (shard: number) => `s${shard}` as const;

export const shardEntry = ({ available, reserved, sold, received }: Stock) => ({
  a: available,
  r: reserved,
  s: sold,
  n: received,
});

export const stockOfEntry = (entry: ShardEntry): Stock => ({
  available: entry.a,
  reserved: entry.r,
  sold: entry.s,
  received: entry.n,
});

/** The shards a view item holds, with their versions and stock. */
export function shardsOfView(item: ProductViewItem): { shard: number; version: number; stock: Stock }[] {
  return Object.entries(item).flatMap(([attribute, value]) => {
    const match = /^s(\d+)$/.exec(attribute);
    if (!match || !value || typeof value !== 'object') return [];
    const entry = value as ShardEntry;
    return [{ shard: Number(match[1]), version: entry.v, stock: stockOfEntry(entry) }];
  });
}

/** Reservations still held are indexed by expiry (EXPIRY_INDEX), spread over this many index partitions. */
export const EXPIRY_PARTITIONS = 16;

export const expiryPartition = (reservationId: string) => partitionOf(reservationId, EXPIRY_PARTITIONS);
