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

export const productFold: Fold<ProductState, ProductEvent> = {
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

/** VOID: a saga's reservation that compensation ruled out before it was made (stored by earlier versions; orders now hold their stock themselves). */
export type ReservationStatus = 'RESERVED' | 'RELEASED' | 'EXPIRED' | 'COMMITTED' | 'VOID';

export interface Reservation {
  readonly reservationId: string;
  readonly productId: string;
  readonly quantity: number;
  readonly parts: readonly ReservationPart[];
  readonly status: ReservationStatus;
  readonly expiresAt: string;
  readonly orderId?: string;
  readonly createdAt: string;
}

export type ReservationState = Reservation | null;

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
      }
    >
  | DomainEvent<'ReservationReleased', { reservationId: string; reason: 'RELEASED' | 'EXPIRED' }>
  | DomainEvent<'ReservationCommitted', { reservationId: string; orderId?: string }>
  | DomainEvent<
      'ReservationVoided',
      { reservationId: string; productId: string; orderId: string; voidedAt: string }
    >;

export const reservationFold: Fold<ReservationState, ReservationEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'ReservationPlaced': {
        const { reservationId, productId, quantity, parts, expiresAt, orderId, placedAt } = event.data;
        return {
          reservationId,
          productId,
          quantity,
          parts,
          status: 'RESERVED',
          expiresAt,
          createdAt: placedAt,
          ...(orderId ? { orderId } : {}),
        };
      }
      case 'ReservationReleased':
        return state && { ...state, status: event.data.reason };
      case 'ReservationCommitted':
        return state && { ...state, status: 'COMMITTED' };
      case 'ReservationVoided': {
        const { reservationId, productId, orderId, voidedAt } = event.data;
        return {
          reservationId,
          productId,
          quantity: 0,
          parts: [],
          status: 'VOID',
          expiresAt: voidedAt,
          orderId,
          createdAt: voidedAt,
        };
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

export interface ReservationDecision {
  readonly reservation: ReservationEvent[];
  readonly shards: ShardEvents[];
}

export function reserve(command: {
  reservationId: string;
  productId: string;
  parts: readonly ReservationPart[];
  expiresAt: Date;
  orderId?: string;
  now: Date;
}): ReservationDecision {
  const quantity = command.parts.reduce((n, p) => n + p.quantity, 0);
  return {
    reservation: [
      {
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
        },
      },
    ],
    shards: command.parts.map((p) => ({
      shard: p.shard,
      events: [
        {
          type: 'StockReserved',
          schemaVersion: 1,
          data: { reservationId: command.reservationId, quantity: p.quantity },
        },
      ],
    })),
  };
}

const NOTHING: ReservationDecision = { reservation: [], shards: [] };

/** Gives the stock back. Releasing a reservation that is no longer held decides nothing. */
export function release(reservation: Reservation, reason: 'RELEASED' | 'EXPIRED'): ReservationDecision {
  if (reservation.status !== 'RESERVED') return NOTHING;
  return {
    reservation: [
      {
        type: 'ReservationReleased',
        schemaVersion: 1,
        data: { reservationId: reservation.reservationId, reason },
      },
    ],
    shards: reservation.parts.map((p) => ({
      shard: p.shard,
      events: [
        {
          type: 'StockReleased',
          schemaVersion: 1,
          data: { reservationId: reservation.reservationId, quantity: p.quantity },
        },
      ],
    })),
  };
}

export const isExpired = (reservation: Reservation, now: Date) =>
  reservation.status === 'RESERVED' && now.getTime() >= Date.parse(reservation.expiresAt);

export function expire(reservation: Reservation, now: Date): ReservationDecision {
  return isExpired(reservation, now) ? release(reservation, 'EXPIRED') : NOTHING;
}

export type CommitDecision =
  | { readonly ok: true; readonly decision: ReservationDecision }
  | { readonly ok: false };

/** Turns held stock into sold stock. Committing twice decides nothing the second time. */
export function commit(reservation: Reservation, now: Date): CommitDecision {
  if (reservation.status === 'COMMITTED') return { ok: true, decision: NOTHING };
  if (reservation.status !== 'RESERVED' || isExpired(reservation, now)) return { ok: false };
  const id = reservation.reservationId;
  return {
    ok: true,
    decision: {
      reservation: [
        {
          type: 'ReservationCommitted',
          schemaVersion: 1,
          data: { reservationId: id, ...(reservation.orderId ? { orderId: reservation.orderId } : {}) },
        },
      ],
      shards: reservation.parts.map((p) => ({
        shard: p.shard,
        events: [{ type: 'StockSold', schemaVersion: 1, data: { reservationId: id, quantity: p.quantity } }],
      })),
    },
  };
}

export function createProduct(command: {
  productId: string;
  sku: string;
  name: string;
  priceCents: number;
  stock: number;
  shardCount: number;
  now: Date;
}): { product: ProductEvent[]; shards: ShardEvents[] } {
  const perShard = splitEvenly(command.stock, command.shardCount);
  return {
    product: [
      {
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
      },
    ],
    shards: perShard.map((quantity, shard) => ({
      shard,
      events: [{ type: 'StockReceived', schemaVersion: 1, data: { quantity } }],
    })),
  };
}

export function restock(
  product: Product,
  quantity: number,
): { product: ProductEvent[]; shards: ShardEvents[] } {
  const perShard = splitEvenly(quantity, product.shardCount);
  return {
    product: [
      {
        type: 'ProductRestocked',
        schemaVersion: 1,
        data: { productId: product.productId, quantity, perShard },
      },
    ],
    shards: perShard.flatMap((quantity, shard): ShardEvents[] =>
      quantity > 0
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
