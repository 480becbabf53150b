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
 * A shard's entry is one string, `<version key>:<available>:<reserved>:<sold>:<received>`,
 * whose version key sorts as the version does (see `versionKey`), so that the
 * projector's guard "only if newer" is a string comparison. Strings, not a
 * map of five numbers: the item is smaller (about 1.7 KB for 64 shards of
 * 15,625 units, two write units, where the maps' 2,062 bytes took three).
 * Entries written as maps by earlier versions are still read, and the
 * projector replaces them.
 */
export interface ProductViewItem {
  readonly id: string;
  readonly product?: Product;
  readonly productVersion?: number;
  readonly [shardAttribute: `s${number}`]: string | LegacyShardEntry | undefined;
}

/** A shard's entry as versions before the string form wrote it. */
interface LegacyShardEntry {
  readonly v: number;
  readonly a: number;
  readonly r: number;
  readonly s: number;
  readonly n: number;
}

/** The attribute holding a shard's entry on its product's view item. */
export const shardAttribute = (shard: number) => `s${shard}` as const;

/**
 * A version as a string that sorts as the number does: its digit count, then
 * its digits ("19" < "210" as 9 < 10). One digit of count covers versions up
 * to 999,999,999, which a shard (a version per event) does not reach.
 */
export function versionKey(version: number): string {
  if (!Number.isSafeInteger(version) || version < 0 || version > 999_999_999)
    throw new RangeError(`a shard version must be an integer from 0 to 999,999,999, not ${version}`);
  const digits = String(version);
  return `${digits.length}${digits}`;
}

/** A shard's entry on the view item: its version's key, then its stock. */
export const shardEntry = (version: number, { available, reserved, sold, received }: Stock) =>
  `${versionKey(version)}:${available}:${reserved}:${sold}:${received}`;

/** A shard's version and stock from its entry (either form), or undefined if it is not one. */
export function parseShardEntry(entry: unknown): { version: number; stock: Stock } | undefined {
  if (typeof entry === 'string') {
    const [key, ...counts] = entry.split(':');
    const [available, reserved, sold, received] = counts.map(Number);
    if (!key || counts.length !== 4 || [available, reserved, sold, received].some((n) => !Number.isFinite(n)))
      return undefined;
    return {
      version: Number(key.slice(1)),
      stock: { available: available!, reserved: reserved!, sold: sold!, received: received! },
    };
  }
  if (entry && typeof entry === 'object' && typeof (entry as LegacyShardEntry).v === 'number') {
    const { v, a, r, s, n } = entry as LegacyShardEntry;
    return { version: v, stock: { available: a, reserved: r, sold: s, received: n } };
  }
  return undefined;
}

/** The shards a view item holds, with their versions and stock. */
export function shardsOfView(item: ProductViewItem): { shard: number; version: number; stock: Stock }[] {
  return Object.entries(item).flatMap(([attribute, value]) => {
    const match = /^s(\d+)$/.exec(attribute);
    const parsed = match ? parseShardEntry(value) : undefined;
    return parsed ? [{ shard: Number(match![1]), ...parsed }] : [];
  });
}

/** Reservations still held are indexed by expiry (EXPIRY_INDEX), spread over this many index partitions. */
export const EXPIRY_PARTITIONS = 16;

export const expiryPartition = (reservationId: string) => partitionOf(reservationId, EXPIRY_PARTITIONS);
