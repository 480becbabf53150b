import { createHash } from 'node:crypto';
import { AlreadyCreated, ClientError, ConcurrencyError, insufficientStock, notFound } from '../shared/errors';
import { type AppendMeta, type Loaded, retryOnConflict, TRANSACTION_ITEM_LIMIT } from '../shared/event-store';
import { newId } from '../shared/ids';
import { serialized } from '../shared/serialized';
import {
  createProduct,
  expire,
  type KnownShard,
  NO_STOCK,
  type Product,
  planReservation,
  productView,
  type Reservation,
  type ReservationPart,
  release,
  reservationFold,
  reserve,
  restock,
  type ShardEvents,
  type Stock,
  shardCountFor,
  shardId,
  sumStock,
} from './domain';

import { allShards, type InventoryStores, type ShardAppend } from './store';

/**
 * The inventory commands, shared by the HTTP API, the saga steps and the
 * expiry sweeper: load, decide, append, retrying from a fresh load when
 * another writer got there first.
 */
export function inventoryCommands(stores: InventoryStores, settings: InventorySettings) {
  const {
    products,
    reservations,
    stock,
    loadProduct,
    loadShards,
    loadAllShards,
    append,
    applyReservationDecision,
    shardAppends,
  } = stores;

  async function requireProduct(productId: string): Promise<Product> {
    const product = await loadProduct(productId);
    if (!product) throw notFound('product', productId);
    return product;
  }

  async function view(productId: string) {
    const product = await requireProduct(productId);
    const shards = await loadShards(productId, allShards(product));
    return productView(product, sumStock([...shards.values()].map((s) => s.state)));
  }

  /**
   * Refuses, with no read and no write, a reservation this sandbox knows
   * cannot be met: every shard confirmed short within the cache's bound.
   */
  function refuseIfKnownShort(product: Product, quantity: number) {
    const available = stock.shortfall(product.productId, product.shardCount, quantity, Date.now());
    if (available !== undefined) throw insufficientStock(product.productId, quantity, available);
  }

  async function create(
    input: { sku: string; name: string; priceCents: number; stock: number },
    meta: AppendMeta,
    productId = newId('prd'),
  ) {
    const shardCount = shardCountFor(input.stock, settings);
    const decided = createProduct({ productId, ...input, shardCount, now: meta.now });
    const empty = new Map(decided.shards.map((s) => [s.shard, { state: NO_STOCK, version: 0 }]));
    await append([
      products.pending(productId, 0, decided.product, null, meta),
      ...shardAppends(productId, decided.shards, empty, meta),
    ]);
    return view(productId);
  }

  async function restockProduct(productId: string, quantity: number, meta: AppendMeta) {
    const product = await requireProduct(productId);
    await retryOnConflict(async () => {
      const current = await products.load(productId);
      const decided = restock(product, quantity);
      const loaded = await loadShards(
        productId,
        decided.shards.map((s) => s.shard),
      );
      await append([
        products.pending(productId, current.version, decided.product, current.state, meta),
        ...shardAppends(productId, decided.shards, loaded, meta),
      ]);
    });
    return view(productId);
  }

  /**
   * Reserves `quantity` units from one random shard that may have them all
   * (so that concurrent reservations of one product land on different
   * partition keys), else from several; refused at once when this sandbox
   * knows the product is short.
   */
  async function reserveStock(
    productId: string,
    quantity: number,
    meta: AppendMeta,
    reservationId = newId('res'),
  ): Promise<Reservation> {
    const product = await requireProduct(productId);
    const expiresAt = new Date(meta.now.getTime() + settings.reservationTtlSeconds * 1000);
    const place = async (parts: ReservationPart[], loaded: ReadonlyMap<number, Loaded<Stock>>) => {
      const decision = reserve({ reservationId, productId, parts, expiresAt, now: meta.now });
      const none = { state: null, version: 0 };
      try {
        await applyReservationDecision(productId, reservationId, none, decision, loaded, meta);
      } catch (error) {
        // The reservation exists: a repeat of the request that made it (its id derives from the key).
        if (error instanceof ConcurrencyError && error.aggregateIds.includes(reservationId))
          throw new AlreadyCreated(reservationId);
        throw error;
      }
      return reservationFold.evolve(null, decision.reservation[0]!)!;
    };
    return throttledWhenContended(async () => {
      refuseIfKnownShort(product, quantity);
      const attemptStart = Date.now();
      // The common case: one shard has it all. Reservations of that shard take turns in this sandbox;
      // one whose turn comes after the shard was found short meanwhile does not read it again.
      const first = randomCandidate(product, quantity);
      const single =
        first === undefined
          ? undefined
          : await serialized(shardId(productId, first), async () => {
              if (!isCandidate(product, quantity, first)) return undefined;
              const planned = await planFromShard(product, quantity, first);
              return planned && place(planned.parts, planned.loaded);
            });
      if (single) return single;
      refuseIfKnownShort(product, quantity);
      const planned = await planAcrossShards(product, quantity, attemptStart);
      if (!planned.ok) throw insufficientStock(productId, quantity, planned.available);
      return place(planned.parts, planned.loaded);
    });
  }

  const isCandidate = (product: Product, quantity: number, shard: number) =>
    stock.candidates(product.productId, product.shardCount, quantity, Date.now()).includes(shard);

  /** A random shard not known to be short of `quantity`, or undefined if every shard is. */
  function randomCandidate(product: Product, quantity: number) {
    const candidates = stock.candidates(product.productId, product.shardCount, quantity, Date.now());
    return candidates[Math.floor(Math.random() * candidates.length)];
  }

  /** The whole of `quantity` from `shard`, in one read, if that shard has it. */
  async function planFromShard(product: Product, quantity: number, shard: number) {
    const loaded = await loadShards(product.productId, [shard]);
    if (loaded.get(shard)!.state.available < quantity) return undefined;
    return { ok: true as const, parts: [{ shard, quantity }], loaded };
  }

  /** Plans `quantity` from one random shard when it has it all, else over every shard. */
  async function planQuickly(product: Product, quantity: number) {
    const attemptStart = Date.now();
    const first = randomCandidate(product, quantity);
    const single = first === undefined ? undefined : await planFromShard(product, quantity, first);
    return single ?? planAcrossShards(product, quantity, attemptStart);
  }

  /**
   * Loads every shard of `product` (one read shared by this sandbox's
   * concurrent callers, sent after `notBefore`) and plans `quantity` over
   * them, trying shards in a random order, or says how much there is.
   */
  async function planAcrossShards(product: Product, quantity: number, notBefore: number) {
    const loaded = await loadAllShards(product, notBefore);
    const parts = planReservation(availability(shuffled(allShards(product)), loaded), quantity);
    if (parts) return { ok: true as const, parts, loaded };
    return { ok: false as const, available: [...loaded.values()].reduce((n, s) => n + s.state.available, 0) };
  }

  /**
   * Plans the stock of every item of an order, all or nothing: from one
   * random shard that has an item's whole quantity, else spread over shards.
   * Nothing is written: the saga appends these shard events in one
   * transaction with the order's own event, which records what it holds.
   */
  async function planOrderStock(
    orderId: string,
    items: readonly { productId: string; quantity: number }[],
    meta: AppendMeta,
  ): Promise<{ parts: ReservationPart[][]; appends: ShardAppend[] } | { outOfStock: string[] }> {
    const parts: ReservationPart[][] = [];
    const appends: ShardAppend[] = [];
    const outOfStock: string[] = [];
    for (const item of items) {
      const product = await loadProduct(item.productId);
      const knownShort =
        product &&
        stock.shortfall(product.productId, product.shardCount, item.quantity, Date.now()) !== undefined;
      const planned = product && !knownShort ? await planQuickly(product, item.quantity) : undefined;
      if (!planned?.ok) {
        outOfStock.push(item.productId);
        continue;
      }
      parts.push(planned.parts);
      const reservationId = sagaReservationId(orderId, item.productId);
      appends.push(
        ...shardAppends(
          item.productId,
          shardEvents('StockReserved', reservationId, planned.parts),
          planned.loaded,
          meta,
        ),
      );
    }
    if (outOfStock.length > 0) return { outOfStock };
    // Confirming or cancelling writes these shards again in one transaction with the order's event (and,
    // cancelling, the payment and the customer's credit); an order whose stock is spread over more shards
    // than that transaction holds cannot be taken whole, so its spread items count as out of stock.
    if (appends.length + ORDER_TRANSACTION_EXTRA_ITEMS > TRANSACTION_ITEM_LIMIT) {
      return { outOfStock: items.filter((_, n) => parts[n]!.length > 1).map((item) => item.productId) };
    }
    return { parts, appends };
  }

  /**
   * The shard appends that turn an order's held stock (`parts`, item by item)
   * into sold stock (`StockSold`) or give it back (`StockReleased`), to be
   * written in one transaction with the order's confirmation or cancellation.
   */
  async function heldStockAppends(
    type: 'StockSold' | 'StockReleased',
    order: { orderId: string; items: readonly { productId: string }[] },
    parts: readonly (readonly ReservationPart[])[],
    meta: AppendMeta,
    /** Shards as the caller last saw them (e.g. the reserving step wrote them): not read again. */
    known: readonly KnownShard[] = [],
  ): Promise<ShardAppend[]> {
    const appends: ShardAppend[] = [];
    for (const [i, { productId }] of order.items.entries()) {
      const held = parts[i] ?? [];
      const seen = new Map(
        known
          .filter((k) => k.productId === productId)
          .map((k) => [k.shard, { state: k.state, version: k.version }]),
      );
      const unseen = held.map((p) => p.shard).filter((shard) => !seen.has(shard));
      const loaded = new Map([...seen, ...(unseen.length > 0 ? await loadShards(productId, unseen) : [])]);
      const events = shardEvents(type, sagaReservationId(order.orderId, productId), held);
      appends.push(...shardAppends(productId, events, loaded, meta));
    }
    return appends;
  }

  async function loadReservation(productId: string | undefined, reservationId: string) {
    const loaded = await reservations.load(reservationId);
    if (!loaded.state || (productId !== undefined && loaded.state.productId !== productId)) {
      throw notFound('reservation', reservationId);
    }
    return { state: loaded.state, version: loaded.version };
  }

  /** Releases (or, with reason EXPIRED, expires) a held reservation; a repeat changes nothing. */
  async function releaseReservation(
    productId: string | undefined,
    reservationId: string,
    reason: 'RELEASED' | 'EXPIRED',
    meta: AppendMeta,
  ): Promise<{ reservation: Reservation; changed: boolean }> {
    return retryOnConflict(async () => {
      const loaded = await loadReservation(productId, reservationId);
      const reservation = loaded.state;
      if (reservation.status === 'COMMITTED' && reason === 'RELEASED') {
        throw new ClientError(
          409,
          'RESERVATION_COMMITTED',
          `reservation ${reservationId} was sold with its order`,
        );
      }
      const decision = reason === 'EXPIRED' ? expire(reservation, meta.now) : release(reservation, reason);
      if (decision.reservation.length === 0) return { reservation, changed: false };
      const shards = await loadShards(
        reservation.productId,
        reservation.parts.map((p) => p.shard),
      );
      await applyReservationDecision(reservation.productId, reservationId, loaded, decision, shards, meta);
      return { reservation: { ...reservation, status: reason }, changed: true };
    });
  }

  return {
    view,
    create,
    restockProduct,
    reserveStock,
    releaseReservation,
    planOrderStock,
    heldStockAppends,
    /** Writes appends all or nothing, keeping this sandbox's knowledge of the shards up to date. */
    append,
  };
}

/**
 * The inventory as the order saga uses it: an order's stock planned (nothing
 * written), the writes that sell it or give it back, and the transaction that
 * writes them with the saga's other appends, keeping this sandbox's knowledge
 * of the shards up to date.
 */
export type OrderStock = Pick<
  ReturnType<typeof inventoryCommands>,
  'planOrderStock' | 'heldStockAppends' | 'append'
>;

/** What `append`ed shard appends leave their shards as. */
export const shardsAfter = (appends: readonly ShardAppend[]): KnownShard[] =>
  appends.map((a) => ({ productId: a.productId, shard: a.shard, ...a.after }));

export interface InventorySettings {
  readonly reservationTtlSeconds: number;
  readonly unitsPerShard: number;
  readonly maxShards: number;
}

/**
 * Retries a reservation that lost optimistic-concurrency races; one that
 * loses every attempt (a product under more contention than its shards
 * absorb) is refused with 429 THROTTLED, which the client may retry, rather
 * than failing as a server error.
 */
async function throttledWhenContended<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await retryOnConflict(attempt);
  } catch (error) {
    if (error instanceof ConcurrencyError) {
      throw new ClientError(429, 'THROTTLED', 'too many concurrent reservations of this product; retry');
    }
    throw error;
  }
}

const availability = (
  order: readonly number[],
  loaded: ReadonlyMap<number, { state: { available: number } }>,
) =>
  order.flatMap((shard) => {
    const s = loaded.get(shard);
    return s ? [{ shard, available: s.state.available }] : [];
  });

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The most an order's own transactions write besides its shards: cancelling, its event, the payment and the credit. */
const ORDER_TRANSACTION_EXTRA_ITEMS = 3;

/** One event of `type` per part, on the part's shard. */
const shardEvents = (
  type: 'StockReserved' | 'StockSold' | 'StockReleased',
  reservationId: string,
  parts: readonly ReservationPart[],
): ShardEvents[] =>
  parts.map((p) => ({
    shard: p.shard,
    events: [{ type, schemaVersion: 1, data: { reservationId, quantity: p.quantity } }],
  }));

/** The id the shards' events carry for one product of one order: the same on every retry. */
export const sagaReservationId = (orderId: string, productId: string) =>
  `res_${createHash('sha256').update(`${orderId}/${productId}`).digest('hex').slice(0, 32)}`;
