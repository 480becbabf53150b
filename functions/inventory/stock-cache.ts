import { type Stock, sumStock } from './domain';

/**
 * What one Lambda sandbox knows of its products' stock shards, kept between
 * invocations so that a flash sale's hot product costs few reads:
 *
 * - every shard state the sandbox reads (event store or read model) or writes
 *   itself is kept here, and a newer version always wins, so what the sandbox
 *   answers never goes back in time;
 * - `shortfall` refuses a reservation with no read and no write when every
 *   shard of the product was confirmed *from the event store or by this
 *   sandbox's own append* less than `confirmMs` ago and together they hold
 *   less than asked. A restock or release made elsewhere is therefore seen
 *   at most `confirmMs` after it commits (at once in the sandbox that made it);
 * - `stock` answers `GET /products/{id}` when every shard was seen (from any
 *   source, the read model included) less than `readMs` ago.
 *
 * Nothing here ever accepts a reservation: that is always an append
 * conditional on the shard's version as read for it, which fails if the
 * shard moved on, so a stale entry can refuse too long (bounded by
 * `confirmMs`), but never oversell.
 */
export interface StockCacheSettings {
  /** How long a shard confirmed from the event store counts for an early refusal. */
  readonly confirmMs: number;
  /** How long a shard seen anywhere (read model included) serves `GET /products/{id}`. */
  readonly readMs: number;
  /** At most this many products are remembered; the least recently added are forgotten first. */
  readonly maxProducts: number;
}

export type StockSource = 'store' | 'view';

interface Entry {
  readonly stock: Stock;
  readonly version: number;
  /** When this version was last seen as the newest (ms since epoch). */
  readonly seenAt: number;
  /** When this version was last confirmed newest by the event store or an own append; 0 if never. */
  readonly confirmedAt: number;
}

export class StockCache {
  private readonly products = new Map<string, (Entry | undefined)[]>();

  constructor(private readonly settings: StockCacheSettings) {}

  /**
   * Records that `shard` of `productId` was at `version` with `stock` at time
   * `at` (for a read, the moment the read was sent). An older version than
   * the one held is ignored: it was superseded.
   */
  remember(productId: string, shard: number, stock: Stock, version: number, at: number, source: StockSource) {
    const shards = this.shardsOf(productId);
    const held = shards[shard];
    if (held && held.version > version) return;
    const same = held?.version === version;
    const confirmedAt = source === 'store' ? at : same ? held.confirmedAt : 0;
    shards[shard] = {
      stock,
      version,
      seenAt: Math.max(at, same ? held.seenAt : 0),
      confirmedAt: Math.max(confirmedAt, same ? held.confirmedAt : 0),
    };
  }

  /** Another writer got to this shard first: what is held of it may be outdated, so it no longer refuses. */
  doubt(productId: string, shard: number) {
    const held = this.products.get(productId)?.[shard];
    if (held) this.products.get(productId)![shard] = { ...held, confirmedAt: 0 };
  }

  /** The newest version of a shard this sandbox has seen, if any. */
  newest(productId: string, shard: number): { stock: Stock; version: number } | undefined {
    return this.products.get(productId)?.[shard];
  }

  /**
   * The units available when every one of `shardCount` shards was confirmed
   * within `confirmMs` before `now` and together they have fewer than
   * `quantity`; undefined when a reservation must be tried.
   */
  shortfall(productId: string, shardCount: number, quantity: number, now: number): number | undefined {
    const shards = this.complete(productId, shardCount, (e) => now - e.confirmedAt < this.settings.confirmMs);
    if (!shards) return undefined;
    const available = shards.reduce((n, s) => n + s.stock.available, 0);
    return available < quantity ? available : undefined;
  }

  /**
   * The shards worth trying for `quantity` from one shard: all but those
   * confirmed within `confirmMs` to have fewer than `quantity` available.
   */
  candidates(productId: string, shardCount: number, quantity: number, now: number): number[] {
    const shards = this.products.get(productId);
    const out: number[] = [];
    for (let i = 0; i < shardCount; i++) {
      const e = shards?.[i];
      const knownShort = e && now - e.confirmedAt < this.settings.confirmMs && e.stock.available < quantity;
      if (!knownShort) out.push(i);
    }
    return out;
  }

  /** The product's stock summed over its shards, when every shard was seen within `readMs` before `now`. */
  stock(productId: string, shardCount: number, now: number): Stock | undefined {
    const shards = this.complete(productId, shardCount, (e) => now - e.seenAt < this.settings.readMs);
    return shards && sumStock(shards.map((s) => s.stock));
  }

  private complete(productId: string, shardCount: number, fresh: (e: Entry) => boolean) {
    const shards = this.products.get(productId);
    if (!shards) return undefined;
    const out: Entry[] = [];
    for (let i = 0; i < shardCount; i++) {
      const e = shards[i];
      if (!e || !fresh(e)) return undefined;
      out.push(e);
    }
    return out;
  }

  private shardsOf(productId: string) {
    let shards = this.products.get(productId);
    if (!shards) {
      if (this.products.size >= this.settings.maxProducts) {
        this.products.delete(this.products.keys().next().value!);
      }
      shards = [];
      this.products.set(productId, shards);
    }
    return shards;
  }
}

/**
 * The bounds this platform runs with (documented in docs/flash-sales.md): a
 * sold-out product becomes reservable again at most one second after a
 * restock or release elsewhere, and `GET /products/{id}` is at most 250 ms
 * older than the read model (plus the read model's own lag): short enough
 * that a client polling after a write elsewhere waits hardly longer than for
 * the read model itself, long enough that a product read thousands of times a
 * second costs one read of the read model per 250 ms per sandbox.
 */
export const STOCK_CACHE: StockCacheSettings = {
  confirmMs: 1000,
  readMs: 250,
  maxProducts: 10_000,
};
