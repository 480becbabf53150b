import { documents, env } from '../shared/aws';
import { AggregateStore, type AppendMeta, appendAtomically, type Loaded } from '../shared/event-store';
import {
  type Product,
  type ProductState,
  productFold,
  type ReservationDecision,
  type ReservationState,
  reservationFold,
  type ShardEvents,
  type Stock,
  shardFold,
  shardId,
} from './domain';

/** The inventory event store: products, their stock shards and reservations share one table. */
export function inventoryStores(tableName = env('INVENTORY_TABLE')) {
  const products = new AggregateStore(documents, tableName, 'Product', productFold);
  const shards = new AggregateStore(documents, tableName, 'StockShard', shardFold);
  const reservations = new AggregateStore(documents, tableName, 'Reservation', reservationFold);

  // A product's identity, price and shard count never change once created.
  const known = new Map<string, Product>();
  async function loadProduct(productId: string): Promise<ProductState> {
    const cached = known.get(productId);
    if (cached) return cached;
    const { state } = await products.load(productId);
    if (state) known.set(productId, state);
    return state;
  }

  const loadShard = (productId: string, shard: number) => shards.load(shardId(productId, shard));

  async function loadShards(productId: string, indices: readonly number[]) {
    const loaded = await Promise.all(indices.map((i) => loadShard(productId, i)));
    return new Map(indices.map((i, n) => [i, loaded[n]!]));
  }

  /** Appends a reservation decision and its shard events in one transaction. */
  async function applyReservationDecision(
    productId: string,
    reservationId: string,
    reservation: Loaded<ReservationState>,
    decision: ReservationDecision,
    loadedShards: ReadonlyMap<number, Loaded<Stock>>,
    meta: AppendMeta,
  ) {
    if (decision.reservation.length === 0) return;
    await appendAtomically(documents, [
      reservations.pending(reservationId, reservation.version, decision.reservation, reservation.state, meta),
      ...shardAppends(productId, decision.shards, loadedShards, meta),
    ]);
  }

  function shardAppends(
    productId: string,
    decided: readonly ShardEvents[],
    loadedShards: ReadonlyMap<number, Loaded<Stock>>,
    meta: AppendMeta,
  ) {
    return decided.map((s) => {
      const loaded = loadedShards.get(s.shard)!;
      return shards.pending(shardId(productId, s.shard), loaded.version, s.events, loaded.state, meta);
    });
  }

  return {
    products,
    shards,
    reservations,
    loadProduct,
    loadShard,
    loadShards,
    applyReservationDecision,
    shardAppends,
  };
}

export type InventoryStores = ReturnType<typeof inventoryStores>;

export const allShards = (product: Product) => Array.from({ length: product.shardCount }, (_, i) => i);
