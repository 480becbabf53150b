import { accept, alreadyDone, type Decider, isRejection, reject } from '../shared/decider';
import type { DomainEvent, Fold } from '../shared/events';
import type { ShardEvents } from './shard';

// A reservation: the stock it took from which shards, until released, expired or sold (see domain.ts).

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
