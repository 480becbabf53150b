import { accept, alreadyDone, type Decider, reject } from '../shared/decider';
import type { DomainEvent } from '../shared/events';

// Holdings: the per-caller limit on a product's live reservations.

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
