/**
 * The envelope every stored event has. `type` is past tense; `schemaVersion`
 * lets an old event be upcast when its data shape changes.
 */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly schemaVersion: number;
  readonly data: Data;
}

/** An event as read back from the store, with where and when it was appended. */
export interface StoredEvent<E extends DomainEvent = DomainEvent> {
  readonly aggregateId: string;
  readonly version: number;
  readonly event: E;
  readonly eventId: string;
  readonly occurredAt: string;
  readonly correlationId?: string;
}

/** The pure half of an aggregate: how its state folds from its events. */
export interface Fold<State, E extends DomainEvent> {
  /** Bumped whenever `evolve` changes meaning, so that stored snapshots of the old fold are ignored. */
  readonly foldVersion: number;
  readonly initial: State;
  evolve(state: State, event: E): State;
  /** Turns an event of an older schema into the current one. */
  upcast?(event: DomainEvent): E;
  /**
   * Turns a stored snapshot of this fold version whose shape changed since
   * (for what `evolve` now folds differently but equivalently) into the
   * current shape, so that the change need not bump `foldVersion`, which would
   * make every stored aggregate be refolded, one more read per load, until it
   * is next appended to.
   */
  upcastState?(state: State): State;
}

export function foldEvents<State, E extends DomainEvent>(
  fold: Fold<State, E>,
  state: State,
  events: readonly E[],
): State {
  return events.reduce((s, e) => fold.evolve(s, e), state);
}
