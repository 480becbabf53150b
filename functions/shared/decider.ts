import type { DomainEvent, Fold } from './events';

/**
 * What a decision comes to: the events to append (none when the command is
 * already done: a repeat changes nothing), or why the command is refused, one
 * of the aggregate's closed set of rejections. The caller maps a rejection to
 * its answer (an HTTP error in a handler, a named error in a saga step).
 */
export type Decision<E extends DomainEvent, R extends Rejection> =
  | { readonly events: readonly E[] }
  | { readonly rejection: R };

/** A refusal: a code from the aggregate's closed set, with the facts that explain it. */
export interface Rejection<Code extends string = string> {
  readonly code: Code;
}

/**
 * One aggregate, pure: how its state folds from its events (`Fold`) and how a
 * command is decided on that state. No I/O, no clock (time is in the command).
 */
export interface Decider<C, S, E extends DomainEvent, R extends Rejection> extends Fold<S, E> {
  decide(command: C, state: S): Decision<E, R>;
}

/** Accepts with `events`. */
export const accept = <E extends DomainEvent>(...events: E[]): { readonly events: readonly E[] } => ({
  events,
});

/** Accepts with nothing to append: the command is already done. */
export const alreadyDone: { readonly events: readonly never[] } = { events: [] };

/** Refuses with `rejection`. */
export const reject = <R extends Rejection>(rejection: R): { readonly rejection: R } => ({ rejection });

export const isRejection = <E extends DomainEvent, R extends Rejection>(
  decision: Decision<E, R>,
): decision is { readonly rejection: R } => 'rejection' in decision;

/**
 * The events of a decision the caller knows cannot be a refusal (say, a
 * creation decided on no state, whose append at version 0 is the guard).
 * A refusal there is a bug, not an outcome: it throws.
 */
export function acceptedEvents<E extends DomainEvent, R extends Rejection>(
  decision: Decision<E, R>,
): readonly E[] {
  if (isRejection(decision)) throw new Error(`unexpected rejection: ${JSON.stringify(decision.rejection)}`);
  return decision.events;
}
