import { type Caller, mayAccess } from '../shared/caller';
import { isRejection } from '../shared/decider';
import { AlreadyCreated, ConcurrencyError } from '../shared/errors';
import { type AppendMeta, type Loaded, type PendingAppend, retryOnConflict } from '../shared/event-store';
import { newId } from '../shared/ids';
import {
  decideProduct,
  decideReservation,
  holdingsDecider,
  NO_STOCK,
  type Product,
  type Reservation,
  type ReservationPart,
  reservationDecider,
  type Stock,
  shardCountFor,
  sumStock,
} from './domain';
import { orderStockPlanning } from './order-stock';
import { isShortfall, stockPlanning } from './stock-planning';
import { allShards, holdingsId, type InventoryStores } from './store';

/** Why an inventory use case refused; the HTTP handler answers each in the contract's error shape. */
export type InventoryRejection =
  | { readonly code: 'NO_SUCH_PRODUCT'; readonly productId: string }
  | { readonly code: 'NO_SUCH_RESERVATION'; readonly reservationId: string }
  | {
      readonly code: 'INSUFFICIENT_STOCK';
      readonly productId: string;
      readonly requested: number;
      readonly available: number;
    }
  /** Every attempt lost an optimistic-concurrency race: the product is under more contention than its shards absorb. */
  | { readonly code: 'CONTENDED'; readonly productId: string }
  /** Releasing a reservation that was sold with its order. */
  | { readonly code: 'RESERVATION_COMMITTED'; readonly reservationId: string }
  /** A shop caller's live reservations of the product plus this one would pass its limit. */
  | {
      readonly code: 'HOLD_LIMIT_REACHED';
      readonly productId: string;
      readonly requested: number;
      readonly held: number;
      readonly limit: number;
    };

/** What a use case answers: its result, or why it refused. */
export type Outcome<T> = { readonly ok: T } | { readonly rejection: InventoryRejection };

/** A product's stock, summed over its shards. */
export interface ProductStock {
  readonly product: Product;
  readonly stock: Stock;
}

const noSuchProduct = (productId: string) => ({ rejection: { code: 'NO_SUCH_PRODUCT', productId } }) as const;
const insufficientStock = (productId: string, requested: number, available: number) =>
  ({ rejection: { code: 'INSUFFICIENT_STOCK', productId, requested, available } }) as const;

/**
 * The inventory's use cases, shared by the HTTP API, the saga steps and the
 * expiry sweeper: load, decide, append, retrying from a fresh load when
 * another writer got there first. Where reservations find their stock (the
 * flash-sale machinery) is `StockPlanning`'s to say.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: it is a factory: its body is the module's use cases, each a function of its own.
export function inventoryCommands(stores: InventoryStores, settings: InventorySettings) {
  const {
    products,
    reservations,
    holdings,
    loadProduct,
    loadShards,
    append,
    applyReservationDecision,
    shardAppends,
  } = stores;
  const planning = stockPlanning(stores);

  async function view(productId: string): Promise<Outcome<ProductStock>> {
    const product = await loadProduct(productId);
    if (!product) return noSuchProduct(productId);
    const shards = await loadShards(productId, allShards(product));
    return { ok: { product, stock: sumStock([...shards.values()].map((s) => s.state)) } };
  }

  async function create(
    input: { sku: string; name: string; priceCents: number; stock: number },
    meta: AppendMeta,
    productId = newId('prd'),
  ) {
    const shardCount = shardCountFor(input.stock, settings);
    const decided = decideProduct({ type: 'Create', productId, ...input, shardCount, now: meta.now }, null);
    if ('rejection' in decided) throw new Error(`a new product refused: ${decided.rejection.code}`);
    const empty = new Map(decided.shards.map((s) => [s.shard, { state: NO_STOCK, version: 0 }]));
    await append([
      products.pending(productId, 0, decided.product, null, meta),
      ...shardAppends(productId, decided.shards, empty, meta),
    ]);
    return view(productId);
  }

  async function restockProduct(productId: string, quantity: number, meta: AppendMeta) {
    const product = await loadProduct(productId);
    if (!product) return noSuchProduct(productId);
    await retryOnConflict(async () => {
      const current = await products.load(productId);
      // The product's shard count never changes: the one read before the retries splits the quantity.
      const decided = decideProduct({ type: 'Restock', quantity }, product);
      if ('rejection' in decided)
        throw new Error(`product ${productId} refused a restock: ${decided.rejection.code}`);
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
   * knows the product is short. One that loses every optimistic-concurrency
   * race is refused as contended (the client may retry), not failed.
   */
  async function reserveStock(
    productId: string,
    quantity: number,
    meta: AppendMeta,
    reservationId = newId('res'),
    /** Who places it: it records them as its holder, and a shop caller's counts against its limit. */
    caller?: Caller,
  ): Promise<Outcome<Reservation>> {
    const product = await loadProduct(productId);
    if (!product) return noSuchProduct(productId);
    const expiresAt = new Date(meta.now.getTime() + settings.reservationTtlSeconds * 1000);
    const limit = caller && !caller.isAdmin ? settings.holdLimitPerCaller : undefined;
    /** This attempt's `HoldTaken`, decided on the holdings as just read: written with the reservation. */
    let hold: PendingAppend | undefined;
    const takeHold = async (): Promise<Outcome<undefined> | undefined> => {
      if (limit === undefined || !caller) return undefined;
      const id = holdingsId(productId, caller.sub);
      const held = await holdings.load(id);
      const decision = holdingsDecider.decide(
        { type: 'Take', reservationId, quantity, expiresAt, limit, now: meta.now },
        held.state,
      );
      if (isRejection(decision)) {
        const { held: units } = decision.rejection;
        return {
          rejection: { code: 'HOLD_LIMIT_REACHED', productId, requested: quantity, held: units, limit },
        };
      }
      hold = holdings.pending(id, held.version, decision.events, held.state, meta);
      return undefined;
    };
    const place = async ({
      parts,
      loaded,
    }: {
      parts: ReservationPart[];
      loaded: ReadonlyMap<number, Loaded<Stock>>;
    }) => {
      const decision = decideReservation(
        {
          type: 'Place',
          reservationId,
          productId,
          parts,
          expiresAt,
          now: meta.now,
          ...(caller?.sub ? { holder: caller.sub } : {}),
          limited: hold !== undefined,
        },
        null,
      );
      if ('rejection' in decision) throw new Error(`a new reservation refused: ${decision.rejection.code}`);
      const none = { state: null, version: 0 };
      try {
        await applyReservationDecision(
          productId,
          reservationId,
          none,
          decision,
          loaded,
          meta,
          hold ? [hold] : [],
        );
      } catch (error) {
        // The reservation exists: a repeat of the request that made it (its id derives from the key).
        if (error instanceof ConcurrencyError && error.existing.includes(reservationId))
          throw new AlreadyCreated(reservationId);
        throw error;
      }
      return { ok: reservationDecider.evolve(null, decision.reservation[0]!) as Reservation };
    };
    const knownShort = () => {
      const available = planning.knownShortfall(product, quantity);
      return available === undefined ? undefined : insufficientStock(productId, quantity, available);
    };
    try {
      return await retryOnConflict(async () => {
        // A product this sandbox knows is short is refused from memory, before the caller's holdings are
        // read: after a flash sale sells out, every further request is refused with no read at all.
        const refused = knownShort();
        if (refused) return refused;
        // Then the limit: a caller at it is refused whatever the shards hold, with no read of one.
        const overLimit = await takeHold();
        if (overLimit) return overLimit as Outcome<Reservation>;
        const attemptStart = Date.now();
        // The common case: one shard has it all.
        const single = await planning.fromOneShard(product, quantity, place);
        if (single) return single;
        const refusedSince = knownShort();
        if (refusedSince) return refusedSince;
        const planned = await planning.acrossShards(product, quantity, attemptStart);
        if (isShortfall(planned)) return insufficientStock(productId, quantity, planned.available);
        return place(planned);
      });
    } catch (error) {
      if (error instanceof ConcurrencyError) return { rejection: { code: 'CONTENDED', productId } };
      throw error;
    }
  }

  /** Releases (or, with reason EXPIRED, expires) a held reservation; a repeat changes nothing. */
  async function releaseReservation(
    productId: string | undefined,
    reservationId: string,
    reason: 'RELEASED' | 'EXPIRED',
    meta: AppendMeta,
    /** Who asks: a shop caller may release only its own (another's is as unknown). Omitted: the sweeper. */
    caller?: Caller,
  ): Promise<Outcome<{ changed: boolean }>> {
    return retryOnConflict(async () => {
      const loaded = await reservations.load(reservationId);
      const reservation = loaded.state;
      if (
        !reservation ||
        (productId !== undefined && reservation.productId !== productId) ||
        (caller !== undefined && !mayAccess(caller, 'holder' in reservation ? reservation.holder : undefined))
      ) {
        return { rejection: { code: 'NO_SUCH_RESERVATION', reservationId } };
      }
      const command =
        reason === 'EXPIRED' ? ({ type: 'Expire', now: meta.now } as const) : ({ type: 'Release' } as const);
      const decision = decideReservation(command, reservation);
      if ('rejection' in decision) {
        // Only a release of a sold reservation is refused: it has been placed, and expiring refuses nothing.
        return { rejection: { code: 'RESERVATION_COMMITTED', reservationId } };
      }
      if (decision.reservation.length === 0) return { ok: { changed: false } };
      const shards = await loadShards(
        reservation.productId,
        decision.shards.map((s) => s.shard),
      );
      // What it held counts against its holder's limit no more: returned in the same transaction.
      const returned: PendingAppend[] = [];
      if (reservation.status !== 'VOIDED' && reservation.limited && reservation.holder) {
        const id = holdingsId(reservation.productId, reservation.holder);
        const held = await holdings.load(id);
        const back = holdingsDecider.decide({ type: 'Return', reservationId }, held.state);
        if (!isRejection(back) && back.events.length > 0)
          returned.push(holdings.pending(id, held.version, back.events, held.state, meta));
      }
      await applyReservationDecision(
        reservation.productId,
        reservationId,
        loaded,
        decision,
        shards,
        meta,
        returned,
      );
      return { ok: { changed: true } };
    });
  }

  return {
    view,
    create,
    restockProduct,
    reserveStock,
    releaseReservation,
    ...orderStockPlanning(stores, planning),
    /** Writes appends all or nothing, keeping this sandbox's knowledge of the shards up to date. */
    append,
  };
}

export interface InventorySettings {
  readonly reservationTtlSeconds: number;
  readonly unitsPerShard: number;
  readonly maxShards: number;
  /** The most units of one product a shop caller may hold in live reservations; undefined: no limit. */
  readonly holdLimitPerCaller?: number;
}
