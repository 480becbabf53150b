import { accept, alreadyDone, type Decider, isRejection, reject } from '../shared/decider';
import type { DomainEvent, Fold } from '../shared/events';

/**
 * Inventory keeps a product's stock in one or more shards, each its own
 * aggregate, so that reservations of one product spread over several
 * partition keys. A reservation is an aggregate too: it remembers which
 * shards it took from, so that releasing, expiring or selling it returns
 * exactly that stock. Every shard holds `available + reserved + sold =
 * received` by construction, so their sum does too.
 */

// ---- product ---------------------------------------------------------------

export interface Product {
  readonly productId: string;
  readonly sku: string;
  readonly name: string;
  readonly priceCents: number;
  readonly shardCount: number;
  readonly createdAt: string;
}

export type ProductState = Product | null;

export type ProductEvent =
  | DomainEvent<
      'ProductCreated',
      {
        productId: string;
        sku: string;
        name: string;
        priceCents: number;
        initialStock: number;
        shardCount: number;
        createdAt: string;
      }
    >
  | DomainEvent<'ProductRestocked', { productId: string; quantity: number; perShard: number[] }>;

const productFold: Fold<ProductState, ProductEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'ProductCreated': {
        const { productId, sku, name, priceCents, shardCount, createdAt } = event.data;
        return { productId, sku, name, priceCents, shardCount, createdAt };
      }
      case 'ProductRestocked':
        return state;
    }
  },
};

// ---- stock shard -----------------------------------------------------------

export interface Stock {
  readonly available: number;
  readonly reserved: number;
  readonly sold: number;
  readonly received: number;
}

/** A stock shard as some step last wrote it, handed to a later step so that it need not read it again. */
export interface KnownShard {
  readonly productId: string;
  readonly shard: number;
  readonly state: Stock;
  readonly version: number;
}
export const NO_STOCK: Stock = { available: 0, reserved: 0, sold: 0, received: 0 };

export type ShardEvent =
  | DomainEvent<'StockReceived', { quantity: number }>
  | DomainEvent<'StockReserved', { reservationId: string; quantity: number }>
  | DomainEvent<'StockReleased', { reservationId: string; quantity: number }>
  | DomainEvent<'StockSold', { reservationId: string; quantity: number }>;

export const shardFold: Fold<Stock, ShardEvent> = {
  foldVersion: 1,
  initial: NO_STOCK,
  evolve(s, event) {
    const q = event.data.quantity;
    switch (event.type) {
      case 'StockReceived':
        return { ...s, available: s.available + q, received: s.received + q };
      case 'StockReserved':
        return { ...s, available: s.available - q, reserved: s.reserved + q };
      case 'StockReleased':
        return { ...s, available: s.available + q, reserved: s.reserved - q };
      case 'StockSold':
        return { ...s, reserved: s.reserved - q, sold: s.sold + q };
    }
  },
};

export const shardId = (productId: string, index: number) => `${productId}#${index}`;

export const sumStock = (shards: readonly Stock[]): Stock =>
  shards.reduce(
    (t, s) => ({
      available: t.available + s.available,
      reserved: t.reserved + s.reserved,
      sold: t.sold + s.sold,
      received: t.received + s.received,
    }),
    NO_STOCK,
  );

/** Splits `quantity` over `shards` as evenly as whole units allow. */
export function splitEvenly(quantity: number, shards: number): number[] {
  const base = Math.floor(quantity / shards);
  const extra = quantity % shards;
  return Array.from({ length: shards }, (_, i) => base + (i < extra ? 1 : 0));
}

// ---- reservation -----------------------------------------------------------

export interface ReservationPart {
  readonly shard: number;
  readonly quantity: number;
}

interface HeldReservation {
  readonly reservationId: string;
  readonly productId: string;
  readonly quantity: number;
  readonly parts: readonly ReservationPart[];
  readonly expiresAt: string;
  readonly orderId?: string;
  readonly createdAt: string;
  /** The `sub` that placed it: only it (or an admin) may release it. None: placed before callers were known. */
  readonly holder?: string;
  /** It counts against its holder's per-caller limit (see `Holdings`): a shop caller's. */
  readonly limited?: true;
}

/** A reservation that took stock: held (RESERVED) until it is released, expires or is sold with its order (COMMITTED). */
export interface Reservation extends HeldReservation {
  readonly status: 'RESERVED' | 'RELEASED' | 'EXPIRED' | 'COMMITTED';
}

/**
 * A saga's reservation that compensation ruled out before it was made, so
 * that none could be made after (stored by earlier versions: orders now hold
 * their stock themselves). It took no stock: it has no quantity or parts.
 */
export interface VoidedReservation {
  readonly status: 'VOIDED';
  readonly reservationId: string;
  readonly productId: string;
  readonly orderId: string;
  readonly voidedAt: string;
}

export type ReservationState = Reservation | VoidedReservation | null;
export type ReservationStatus = NonNullable<ReservationState>['status'];

export type ReservationEvent =
  | DomainEvent<
      'ReservationPlaced',
      {
        reservationId: string;
        productId: string;
        quantity: number;
        parts: ReservationPart[];
        expiresAt: string;
        orderId?: string;
        placedAt: string;
        holder?: string;
        limited?: true;
      }
    >
  | DomainEvent<'ReservationReleased', { reservationId: string; reason: 'RELEASED' | 'EXPIRED' }>
  | DomainEvent<'ReservationCommitted', { reservationId: string; orderId?: string }>
  | DomainEvent<
      'ReservationVoided',
      { reservationId: string; productId: string; orderId: string; voidedAt: string }
    >;

const reservationFold: Fold<ReservationState, ReservationEvent> = {
  foldVersion: 1,
  initial: null,
  // Earlier versions stored a voided reservation as VOID, with a placeholder quantity, parts and expiry.
  upcastState(state) {
    if ((state?.status as string) !== 'VOID') return state;
    const legacy = state as unknown as {
      reservationId: string;
      productId: string;
      orderId: string;
      createdAt: string;
    };
    const { reservationId, productId, orderId, createdAt } = legacy;
    return { status: 'VOIDED', reservationId, productId, orderId, voidedAt: createdAt };
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ReservationPlaced': {
        const { reservationId, productId, quantity, parts, expiresAt, orderId, placedAt, holder, limited } =
          event.data;
        return {
          reservationId,
          productId,
          quantity,
          parts,
          status: 'RESERVED',
          expiresAt,
          createdAt: placedAt,
          ...(orderId ? { orderId } : {}),
          ...(holder ? { holder } : {}),
          ...(limited ? { limited } : {}),
        };
      }
      case 'ReservationReleased':
        return state && state.status !== 'VOIDED' ? { ...state, status: event.data.reason } : state;
      case 'ReservationCommitted':
        return state && state.status !== 'VOIDED' ? { ...state, status: 'COMMITTED' } : state;
      case 'ReservationVoided': {
        const { reservationId, productId, orderId, voidedAt } = event.data;
        return { status: 'VOIDED', reservationId, productId, orderId, voidedAt };
      }
    }
  },
};

// ---- decisions -------------------------------------------------------------

export interface ShardAvailability {
  readonly shard: number;
  readonly available: number;
}

/**
 * Chooses where `quantity` comes from: the first shard (in the caller's
 * order, which spreads load) that has it all, else several, fullest first.
 * Null when the shards together do not have enough.
 */
export function planReservation(
  shards: readonly ShardAvailability[],
  quantity: number,
): ReservationPart[] | null {
  const whole = shards.find((s) => s.available >= quantity);
  if (whole) return [{ shard: whole.shard, quantity }];
  const parts: ReservationPart[] = [];
  let missing = quantity;
  for (const s of [...shards].sort((a, b) => b.available - a.available)) {
    if (missing === 0 || s.available <= 0) break;
    const take = Math.min(s.available, missing);
    parts.push({ shard: s.shard, quantity: take });
    missing -= take;
  }
  return missing === 0 ? parts : null;
}

export interface ShardEvents {
  readonly shard: number;
  readonly events: ShardEvent[];
}

export type ReservationCommand =
  | {
      readonly type: 'Place';
      readonly reservationId: string;
      readonly productId: string;
      readonly parts: readonly ReservationPart[];
      readonly expiresAt: Date;
      readonly orderId?: string;
      readonly now: Date;
      readonly holder?: string;
      readonly limited?: boolean;
    }
  /** Gives the stock back at the client's request. */
  | { readonly type: 'Release' }
  /** Gives the stock back once the reservation's time is up. */
  | { readonly type: 'Expire'; readonly now: Date }
  /** Turns held stock into sold stock. */
  | { readonly type: 'Commit'; readonly now: Date };

export type ReservationRejection =
  | { readonly code: 'ALREADY_PLACED' }
  | { readonly code: 'NO_SUCH_RESERVATION' }
  /** Releasing a reservation that was sold with its order. */
  | { readonly code: 'RESERVATION_COMMITTED' }
  /** Committing a reservation no longer held (released, expired, voided, or past its expiry time). */
  | { readonly code: 'NOT_HELD' };

export const isExpired = (reservation: Reservation, now: Date) =>
  reservation.status === 'RESERVED' && now.getTime() >= Date.parse(reservation.expiresAt);

/**
 * The reservation: placed once; released or expired while held (a repeat, or
 * a reservation no longer held, decides nothing, but one sold with its order
 * cannot be released); committed while held and before its expiry time
 * (committing twice decides nothing).
 */
export const reservationDecider: Decider<
  ReservationCommand,
  ReservationState,
  ReservationEvent,
  ReservationRejection
> = {
  ...reservationFold,
  decide(command, state) {
    if (command.type === 'Place') {
      if (state) return reject({ code: 'ALREADY_PLACED' });
      const quantity = command.parts.reduce((n, p) => n + p.quantity, 0);
      return accept<ReservationEvent>({
        type: 'ReservationPlaced',
        schemaVersion: 1,
        data: {
          reservationId: command.reservationId,
          productId: command.productId,
          quantity,
          parts: [...command.parts],
          expiresAt: command.expiresAt.toISOString(),
          ...(command.orderId ? { orderId: command.orderId } : {}),
          placedAt: command.now.toISOString(),
          ...(command.holder ? { holder: command.holder } : {}),
          ...(command.limited ? { limited: true as const } : {}),
        },
      });
    }
    if (!state) return reject({ code: 'NO_SUCH_RESERVATION' });
    const { reservationId } = state;
    switch (command.type) {
      case 'Release':
        if (state.status === 'COMMITTED') return reject({ code: 'RESERVATION_COMMITTED' });
        if (state.status !== 'RESERVED') return alreadyDone;
        return accept<ReservationEvent>({
          type: 'ReservationReleased',
          schemaVersion: 1,
          data: { reservationId, reason: 'RELEASED' },
        });
      case 'Expire':
        if (state.status === 'VOIDED' || !isExpired(state, command.now)) return alreadyDone;
        return accept<ReservationEvent>({
          type: 'ReservationReleased',
          schemaVersion: 1,
          data: { reservationId, reason: 'EXPIRED' },
        });
      case 'Commit': {
        if (state.status === 'COMMITTED') return alreadyDone;
        if (state.status !== 'RESERVED' || isExpired(state, command.now)) return reject({ code: 'NOT_HELD' });
        const data = { reservationId, ...(state.orderId ? { orderId: state.orderId } : {}) };
        return accept<ReservationEvent>({ type: 'ReservationCommitted', schemaVersion: 1, data });
      }
    }
  },
};

/** A reservation's events, with the shard events they entail. */
export interface ReservationDecision {
  readonly reservation: readonly ReservationEvent[];
  readonly shards: ShardEvents[];
}

const SHARD_EVENT_OF = {
  ReservationPlaced: 'StockReserved',
  ReservationReleased: 'StockReleased',
  ReservationCommitted: 'StockSold',
} as const;

/**
 * Decides on a reservation and what that does to the shards it holds:
 * placing it takes each part's stock from its shard, releasing or expiring it
 * gives the stock back, committing it sells it. Written in one transaction.
 */
export function decideReservation(
  command: ReservationCommand,
  state: ReservationState,
): ReservationDecision | { readonly rejection: ReservationRejection } {
  const decision = reservationDecider.decide(command, state);
  if (isRejection(decision)) return decision;
  const [event] = decision.events;
  if (!event || event.type === 'ReservationVoided') return { reservation: decision.events, shards: [] };
  const type = SHARD_EVENT_OF[event.type];
  const parts =
    event.type === 'ReservationPlaced'
      ? event.data.parts
      : state && state.status !== 'VOIDED'
        ? state.parts
        : [];
  return {
    reservation: decision.events,
    shards: parts.map((p) => ({
      shard: p.shard,
      events: [
        { type, schemaVersion: 1, data: { reservationId: event.data.reservationId, quantity: p.quantity } },
      ],
    })),
  };
}

export type ProductCommand =
  | {
      readonly type: 'Create';
      readonly productId: string;
      readonly sku: string;
      readonly name: string;
      readonly priceCents: number;
      readonly stock: number;
      readonly shardCount: number;
      readonly now: Date;
    }
  | { readonly type: 'Restock'; readonly quantity: number };

export type ProductRejection = { readonly code: 'ALREADY_CREATED' } | { readonly code: 'NO_SUCH_PRODUCT' };

/** The product: created once, with its shard count fixed; restocked any number of times, spread evenly over its shards. */
export const productDecider: Decider<ProductCommand, ProductState, ProductEvent, ProductRejection> = {
  ...productFold,
  decide(command, state) {
    if (command.type === 'Create') {
      if (state) return reject({ code: 'ALREADY_CREATED' });
      return accept<ProductEvent>({
        type: 'ProductCreated',
        schemaVersion: 1,
        data: {
          productId: command.productId,
          sku: command.sku,
          name: command.name,
          priceCents: command.priceCents,
          initialStock: command.stock,
          shardCount: command.shardCount,
          createdAt: command.now.toISOString(),
        },
      });
    }
    if (!state) return reject({ code: 'NO_SUCH_PRODUCT' });
    const { productId, shardCount } = state;
    const perShard = splitEvenly(command.quantity, shardCount);
    return accept<ProductEvent>({
      type: 'ProductRestocked',
      schemaVersion: 1,
      data: { productId, quantity: command.quantity, perShard },
    });
  },
};

/** A product's events, with the stock they put on its shards. */
export interface ProductDecision {
  readonly product: readonly ProductEvent[];
  readonly shards: ShardEvents[];
}

/**
 * Decides on a product and the stock that puts on its shards: at creation
 * every shard receives its even share (an empty share too, so that every
 * shard exists from the start); at a restock, only the shards whose share
 * has units. Written in one transaction.
 */
export function decideProduct(
  command: ProductCommand,
  state: ProductState,
): ProductDecision | { readonly rejection: ProductRejection } {
  const decision = productDecider.decide(command, state);
  if (isRejection(decision)) return decision;
  const [event] = decision.events;
  const shares =
    event?.type === 'ProductCreated'
      ? splitEvenly(event.data.initialStock, event.data.shardCount)
      : event?.type === 'ProductRestocked'
        ? event.data.perShard
        : [];
  const created = event?.type === 'ProductCreated';
  return {
    product: decision.events,
    shards: shares.flatMap((quantity, shard): ShardEvents[] =>
      created || quantity > 0
        ? [{ shard, events: [{ type: 'StockReceived', schemaVersion: 1, data: { quantity } }] }]
        : [],
    ),
  };
}

/**
 * How many shards a product's stock is spread over, fixed at creation: one
 * per `unitsPerShard` units of initial stock, at least one, at most
 * `maxShards`. A product with little stock keeps one shard (every read is
 * one item); a flash-sale product of 80,000 units gets 64 partition keys.
 */
export const shardCountFor = (stock: number, policy: { unitsPerShard: number; maxShards: number }) =>
  Math.max(1, Math.min(policy.maxShards, Math.ceil(stock / policy.unitsPerShard)));

// ---- holdings (the per-caller limit) ----------------------------------------

/**
 * What one shop caller holds of one product in live reservations: the
 * aggregate that bounds it (`holdingsId`). Every reservation a limited caller
 * places appends `HoldTaken` here in the same transaction as the reservation
 * and its stock, conditional on the version it decided on, so two
 * reservations racing past the limit cannot both land; releasing or expiring
 * it appends `HoldReturned` in the release's transaction. A hold past its
 * expiry no longer counts (the reservation is not live), whether or not the
 * sweeper has expired it yet.
 */
export interface Holdings {
  readonly holds: Readonly<Record<string, { readonly quantity: number; readonly expiresAt: string }>>;
}

export const NO_HOLDINGS: Holdings = { holds: {} };

export type HoldingsEvent =
  | DomainEvent<'HoldTaken', { reservationId: string; quantity: number; expiresAt: string }>
  | DomainEvent<'HoldReturned', { reservationId: string }>;

export type HoldingsCommand =
  | {
      readonly type: 'Take';
      readonly reservationId: string;
      readonly quantity: number;
      readonly expiresAt: Date;
      readonly limit: number;
      readonly now: Date;
    }
  | { readonly type: 'Return'; readonly reservationId: string };

export type HoldingsRejection = {
  readonly code: 'HOLD_LIMIT_REACHED';
  readonly held: number;
  readonly limit: number;
};

/** Units held in holds still live at `now`. */
export const heldAt = (holdings: Holdings, now: Date) =>
  Object.values(holdings.holds)
    .filter((h) => Date.parse(h.expiresAt) > now.getTime())
    .reduce((n, h) => n + h.quantity, 0);

export const holdingsDecider: Decider<HoldingsCommand, Holdings, HoldingsEvent, HoldingsRejection> = {
  foldVersion: 1,
  initial: NO_HOLDINGS,
  evolve(state, event) {
    switch (event.type) {
      case 'HoldTaken': {
        const { reservationId, quantity, expiresAt } = event.data;
        return { holds: { ...state.holds, [reservationId]: { quantity, expiresAt } } };
      }
      case 'HoldReturned': {
        const { [event.data.reservationId]: _returned, ...holds } = state.holds;
        return { holds };
      }
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'Take': {
        const held = heldAt(state, command.now);
        if (held + command.quantity > command.limit)
          return reject({ code: 'HOLD_LIMIT_REACHED', held, limit: command.limit });
        return accept<HoldingsEvent>({
          type: 'HoldTaken',
          schemaVersion: 1,
          data: {
            reservationId: command.reservationId,
            quantity: command.quantity,
            expiresAt: command.expiresAt.toISOString(),
          },
        });
      }
      case 'Return':
        if (!state.holds[command.reservationId]) return alreadyDone;
        return accept<HoldingsEvent>({
          type: 'HoldReturned',
          schemaVersion: 1,
          data: { reservationId: command.reservationId },
        });
    }
  },
};
