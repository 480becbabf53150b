import { createHash } from 'node:crypto';
import { dynamoEvents, fromEnvironment } from '../shared/aws';
import { ConcurrencyError } from '../shared/errors';
import {
  AggregateStore,
  type AppendMeta,
  type EventStore,
  type Loaded,
  type PendingAppend,
} from '../shared/event-store';
import { foldEvents } from '../shared/events';
import {
  holdingsDecider,
  type Product,
  type ProductEvent,
  type ProductState,
  productDecider,
  type ReservationDecision,
  type ReservationEvent,
  type ReservationState,
  reservationDecider,
  type ShardEvent,
  type ShardEvents,
  type Stock,
  shardFold,
  shardId,
} from './domain';
import { inventoryCommandEnvironment } from './seams';
import { STOCK_CACHE, StockCache } from './stock-cache';

/** A shard's pending append, with the state it leaves the shard in. */
export interface ShardAppend extends PendingAppend {
  readonly productId: string;
  readonly shard: number;
  /** The shard's version the append is conditional on. */
  readonly from: number;
  readonly after: Loaded<Stock>;
}

export const isShardAppend = (a: PendingAppend): a is ShardAppend => 'after' in a;

/**
 * The inventory event store: products, their stock shards and reservations
 * share one table. Every shard this sandbox reads or writes goes through
 * `stock` (see StockCache), which is what lets a sold-out product be refused
 * without a read and `GET /products/{id}` be served from memory.
 */
export function inventoryStores(
  tableName = fromEnvironment(inventoryCommandEnvironment).inventoryTable,
  stock = new StockCache(STOCK_CACHE),
  events: EventStore = dynamoEvents,
) {
  const products = new AggregateStore(events, tableName, 'Product', productDecider);
  const shards = new AggregateStore(events, tableName, 'StockShard', shardFold);
  const reservations = new AggregateStore(events, tableName, 'Reservation', reservationDecider);
  const holdings = new AggregateStore(events, tableName, 'Holdings', holdingsDecider);
  const { loadShard, loadShards, loadAllShards } = shardReads(shards, stock);
  const { append, applyReservationDecision, shardAppends } = shardWrites(events, shards, reservations, stock);

  return {
    products,
    shards,
    reservations,
    holdings,
    stock,
    loadProduct: productLoader(products),
    loadShard,
    loadShards,
    loadAllShards,
    append,
    applyReservationDecision,
    shardAppends,
  };
}

type ShardStore = AggregateStore<Stock, ShardEvent>;

/** Loads a product; a product's identity, price and shard count never change once created. */
function productLoader(products: AggregateStore<ProductState, ProductEvent>) {
  const known = new Map<string, Product>();
  return async function loadProduct(productId: string): Promise<ProductState> {
    const cached = known.get(productId);
    if (cached) return cached;
    const { state } = await products.load(productId);
    if (state) known.set(productId, state);
    return state;
  };
}

/** Reads of stock shards, each remembered in `stock` in the state it was read in. */
function shardReads(shards: ShardStore, stock: StockCache) {
  async function loadShard(productId: string, shard: number) {
    const sentAt = Date.now();
    const loaded = await shards.load(shardId(productId, shard));
    stock.remember(productId, shard, loaded.state, loaded.version, sentAt, 'store');
    return loaded;
  }

  async function loadShards(productId: string, indices: readonly number[]) {
    const loaded = await Promise.all(indices.map((i) => loadShard(productId, i)));
    return new Map(indices.map((i, n) => [i, loaded[n]!]));
  }

  /**
   * Every shard of `product`. Concurrent callers of this sandbox share one
   * read, but only a read sent at or after `notBefore` (the start of the
   * caller's attempt): a read older than a conflict the caller just lost
   * would lose it again.
   */
  const inFlight = new Map<string, { sentAt: number; loading: Promise<Map<number, Loaded<Stock>>> }>();
  function loadAllShards(product: Product, notBefore: number) {
    const running = inFlight.get(product.productId);
    if (running && running.sentAt >= notBefore) return running.loading;
    const entry = { sentAt: Date.now(), loading: loadShards(product.productId, allShards(product)) };
    inFlight.set(product.productId, entry);
    void entry.loading
      .finally(() => {
        if (inFlight.get(product.productId) === entry) inFlight.delete(product.productId);
      })
      .catch(() => undefined);
    return entry.loading;
  }

  return { loadShard, loadShards, loadAllShards };
}

/** Writes of stock shards (with the reservations they serve), each told to `stock`. */
function shardWrites(
  events: EventStore,
  shards: ShardStore,
  reservations: AggregateStore<ReservationState, ReservationEvent>,
  stock: StockCache,
) {
  /**
   * Writes `appends` all or nothing; the shards among them are remembered in
   * the state they now hold, or, if another writer got there first, doubted.
   */
  async function append(appends: readonly PendingAppend[]) {
    const sentAt = Date.now();
    const shardAppends = appends.filter(isShardAppend);
    try {
      await events.write(appends);
    } catch (error) {
      if (error instanceof ConcurrencyError) {
        for (const a of shardAppends) stock.doubt(a.productId, a.shard);
      }
      throw error;
    }
    for (const a of shardAppends) {
      stock.remember(a.productId, a.shard, a.after.state, a.after.version, sentAt, 'store');
    }
  }

  /** Appends a reservation decision and its shard events in one transaction. */
  async function applyReservationDecision(
    productId: string,
    reservationId: string,
    reservation: Loaded<ReservationState>,
    decision: ReservationDecision,
    loadedShards: ReadonlyMap<number, Loaded<Stock>>,
    meta: AppendMeta,
    /** More appends of the same decision (the holder's holdings), in the same transaction. */
    also: readonly PendingAppend[] = [],
  ) {
    if (decision.reservation.length === 0) return;
    await append([
      reservations.pending(reservationId, reservation.version, decision.reservation, reservation.state, meta),
      ...shardAppends(productId, decision.shards, loadedShards, meta),
      ...also,
    ]);
  }

  function shardAppends(
    productId: string,
    decided: readonly ShardEvents[],
    loadedShards: ReadonlyMap<number, Loaded<Stock>>,
    meta: AppendMeta,
  ): ShardAppend[] {
    return decided.map((s) => {
      const loaded = loadedShards.get(s.shard)!;
      const pending = shards.pending(
        shardId(productId, s.shard),
        loaded.version,
        s.events,
        loaded.state,
        meta,
      );
      const after = {
        state: foldEvents(shardFold, loaded.state, s.events),
        version: loaded.version + s.events.length,
      };
      return { ...pending, productId, shard: s.shard, from: loaded.version, after };
    });
  }

  return { append, applyReservationDecision, shardAppends };
}

export type InventoryStores = ReturnType<typeof inventoryStores>;

export const allShards = (product: Product) => Array.from({ length: product.shardCount }, (_, i) => i);

/** The aggregate id of what `holder` holds of `productId` (see `Holdings`): a digest, so that any `sub` makes a key. */
export const holdingsId = (productId: string, holder: string) =>
  `hld_${createHash('sha256').update(`${productId}/${holder}`).digest('hex').slice(0, 32)}`;
