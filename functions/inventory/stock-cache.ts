import { StaleShare, type StaleShareSettings } from '../shared/stale-share';
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
 * conditional on the shard's version (read for it, or the one `trusted`
 * hands out), which fails if the shard moved on, so a stale entry can refuse
 * too long (bounded by `confirmMs`) or cost a failed write, but never
 * oversell. Past the settings' StaleShare of such failed writes lately,
 * `trusted` hands nothing out and every shard is read again.
 */
export interface StockCacheSettings extends StaleShareSettings {
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
  /** `trusted` handed this version out: a write from it, unread, is to come (see `wrote`). */
  readonly guessed?: true;
  /** This sandbox held stock here for an order whose sale or release is to come, maybe from another sandbox. */
  readonly settling?: true;
}

export class StockCache {
  private readonly products = new Map<string, (Entry | undefined)[]>();
  private readonly staleWrites: StaleShare;

  constructor(private readonly settings: StockCacheSettings) {
    this.staleWrites = new StaleShare(settings);
  }

  /**
   * Records that `shard` of `productId` was at `version` with `stock` at time
   * `at` (for a read, the moment the read was sent). An older version than
   * the one held is ignored: it was superseded. `settling`: this sandbox's
   * own append held stock for an order, whose sale or release will move the
   * shard on from whichever sandbox runs that step (see `trusted`); a newer
   * version seen ends it.
   */
  remember(
    productId: string,
    shard: number,
    stock: Stock,
    version: number,
    at: number,
    source: StockSource,
    settling = false,
  ) {
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
      ...(settling || (same && held.settling) ? { settling: true as const } : {}),
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

  /**
   * The shard to take `quantity` from without reading it first: of those
   * confirmed (by the event store or this sandbox's own append) within
   * `withinMs` before `now` and holding `quantity`, the most recently
   * confirmed. A write to it is conditional on the next version, so if
   * another writer moved it on meanwhile the write fails (and `doubt` then
   * stops it being chosen here until it is read again).
   * Not a shard still `settling` from this sandbox's hold for an order, until
   * that order's sale or release is seen: taken meanwhile, the next order's
   * write moves the shard past the version ConfirmOrder was handed, so the
   * sale fails once and reads (in this sandbox too), and where the saga has
   * several sandboxes the sale is often written by another, which leaves what
   * is held here stale. Measured (session 22 of docs/benchmarks.md): with
   * this rule the saga kept to one sandbox through a 25/s level in 8 of 11
   * runs (0 of 5 without), reading a third as many shards and customers.
   * None while many such writes were stale lately (see `wrote`).
   */
  trusted(
    productId: string,
    shardCount: number,
    quantity: number,
    now: number,
    withinMs: number,
  ): { shard: number; stock: Stock; version: number } | undefined {
    if (!this.staleWrites.worthGuessing(now)) return undefined;
    const shards = this.products.get(productId);
    let best: { shard: number; entry: Entry } | undefined;
    for (let i = 0; i < shardCount; i++) {
      const e = shards?.[i];
      if (!e || e.settling || now - e.confirmedAt >= withinMs || e.stock.available < quantity) continue;
      if (!best || e.confirmedAt > best.entry.confirmedAt) best = { shard: i, entry: e };
    }
    if (!best) return undefined;
    shards![best.shard] = { ...best.entry, guessed: true };
    return { shard: best.shard, stock: best.entry.stock, version: best.entry.version };
  }

  /**
   * How this sandbox's write of `shard` from `version` went: through, or
   * failed on the shard's version (`stale`). Counted only if `trusted` handed
   * that version out (the write read nothing first); tell it before what the
   * write leaves is remembered or doubted.
   */
  wrote(productId: string, shard: number, version: number, stale: boolean, now: number) {
    const shards = this.products.get(productId);
    const held = shards?.[shard];
    if (!held?.guessed || held.version !== version) return;
    const { guessed: _, ...settled } = held;
    shards![shard] = settled;
    this.staleWrites.record(stale, now);
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
 * second costs one read of the read model per 250 ms per sandbox. Shards are
 * taken unread (`trusted`) while at most a fifth of such writes lately were
 * stale, as the saga's customers are (KNOWN_CUSTOMERS).
 */
export const STOCK_CACHE: StockCacheSettings = {
  confirmMs: 1000,
  readMs: 250,
  maxProducts: 10_000,
  maxStaleShare: 0.2,
  staleHalfLifeMs: 10_000,
};
