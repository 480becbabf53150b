import { createHash } from 'node:crypto';
import { documents } from '../shared/aws';
import { ClientError, insufficientStock, notFound } from '../shared/errors';
import { type AppendMeta, appendAtomically, type Loaded, retryOnConflict } from '../shared/event-store';
import { newId } from '../shared/ids';
import { serialized } from '../shared/serialized';
import {
  commit,
  createProduct,
  expire,
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
  type Stock,
  shardCountFor,
  shardId,
  sumStock,
} from './domain';
import { allShards, type InventoryStores } from './store';

/**
 * The inventory commands, shared by the HTTP API, the saga steps and the
 * expiry sweeper: load, decide, append, retrying from a fresh load when
 * another writer got there first.
 */
export function inventoryCommands(stores: InventoryStores, settings: InventorySettings) {
  const { products, reservations, loadProduct, loadShards, applyReservationDecision, shardAppends } = stores;

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

  async function create(
    input: { sku: string; name: string; priceCents: number; stock: number },
    meta: AppendMeta,
  ) {
    const productId = newId('prd');
    const shardCount = shardCountFor(input.stock, settings);
    const decided = createProduct({ productId, ...input, shardCount, now: meta.now });
    const empty = new Map(decided.shards.map((s) => [s.shard, { state: NO_STOCK, version: 0 }]));
    await appendAtomically(documents, [
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
      await appendAtomically(documents, [
        products.pending(productId, current.version, decided.product, current.state, meta),
        ...shardAppends(productId, decided.shards, loaded, meta),
      ]);
    });
    return view(productId);
  }

  /**
   * Reserves `quantity` units, trying shards in a random order so that
   * concurrent reservations of one product land on different partition keys.
   * With `reservationId` given (the saga's, derived from the order) a repeat
   * finds the first reservation and changes nothing.
   */
  async function reserveStock(
    productId: string,
    quantity: number,
    meta: AppendMeta,
    options: { reservationId?: string; orderId?: string; ttlSeconds?: number } = {},
  ): Promise<Reservation> {
    const product = await requireProduct(productId);
    const reservationId = options.reservationId ?? newId('res');
    const ttlSeconds = options.ttlSeconds ?? settings.reservationTtlSeconds;
    const expiresAt = new Date(meta.now.getTime() + ttlSeconds * 1000);
    const place = async (parts: ReservationPart[], loaded: ReadonlyMap<number, Loaded<Stock>>) => {
      const decision = reserve({
        reservationId,
        productId,
        parts,
        expiresAt,
        ...(options.orderId ? { orderId: options.orderId } : {}),
        now: meta.now,
      });
      await applyReservationDecision(
        productId,
        reservationId,
        { state: null, version: 0 },
        decision,
        loaded,
        meta,
      );
      return reservationFold.evolve(null, decision.reservation[0]!)!;
    };
    return retryOnConflict(async () => {
      if (options.reservationId) {
        const existing = await reservations.load(reservationId);
        if (existing.state) return existing.state;
      }
      const order = shuffled(allShards(product));
      // The common case: one shard has it all. Reservations of that shard take turns in this sandbox.
      const first = order[0]!;
      const single = await serialized(shardId(productId, first), async () => {
        const loaded = await loadShards(productId, [first]);
        return loaded.get(first)!.state.available >= quantity
          ? place([{ shard: first, quantity }], loaded)
          : undefined;
      });
      if (single) return single;
      const loaded = await loadShards(productId, order);
      const parts = planReservation(availability(order, loaded), quantity);
      if (!parts) {
        const available = [...loaded.values()].reduce((n, s) => n + s.state.available, 0);
        throw insufficientStock(productId, quantity, available);
      }
      return place(parts, loaded);
    });
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

  /** Turns a held reservation into sold stock; false if it was released or expired first. */
  async function commitReservation(reservationId: string, meta: AppendMeta): Promise<boolean> {
    return retryOnConflict(async () => {
      const loaded = await loadReservation(undefined, reservationId);
      const decided = commit(loaded.state, meta.now);
      if (!decided.ok) return false;
      if (decided.decision.reservation.length === 0) return true;
      const shards = await loadShards(
        loaded.state.productId,
        loaded.state.parts.map((p) => p.shard),
      );
      await applyReservationDecision(
        loaded.state.productId,
        reservationId,
        loaded,
        decided.decision,
        shards,
        meta,
      );
      return true;
    });
  }

  return {
    view,
    create,
    restockProduct,
    reserveStock,
    releaseReservation,
    commitReservation,
    requireProduct,
  };
}

export interface InventorySettings {
  readonly reservationTtlSeconds: number;
  readonly unitsPerShard: number;
  readonly maxShards: number;
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

/** The saga's reservation id for one product of one order: the same on every retry. */
export const sagaReservationId = (orderId: string, productId: string) =>
  `res_${createHash('sha256').update(`${orderId}/${productId}`).digest('hex').slice(0, 32)}`;
