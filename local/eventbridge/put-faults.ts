/**
 * EventBridge refusing `PutEvents` as it does under pressure or in a fault
 * (`POST /_local/faults/eventbridge`): a share of the entries refused one by
 * one, the call answered 200 with `FailedEntryCount` and each refused
 * entry's `ErrorCode` (a partial failure, which the SDK does not retry: the
 * caller must put those entries again); and a share of whole calls refused
 * with a `ThrottlingException` (a total failure, which the SDK retries as a
 * throttle). `count` bounds each. Off by default.
 */
export interface PutEventsFaults {
  /** Share of entries refused one by one, from 0 to 1. */
  entries: number;
  /** The `ErrorCode` a refused entry carries. */
  entryError: PutEventsEntryError;
  /** Share of `PutEvents` calls refused whole with a `ThrottlingException`, from 0 to 1. */
  calls: number;
  /** At most this many refusals (entries and calls together), then none until set again. */
  count?: number;
}

/** The per-entry error codes PutEvents gives for a failure of its own (not the entry's fault). */
export const PUT_EVENTS_ENTRY_ERRORS = ['ThrottlingException', 'InternalFailure'] as const;
export type PutEventsEntryError = (typeof PUT_EVENTS_ENTRY_ERRORS)[number];

export const noPutEventsFaults = (): PutEventsFaults => ({
  entries: 0,
  entryError: 'InternalFailure',
  calls: 0,
});

const FIELDS = ['entries', 'entryError', 'calls', 'count'];

/** Checks the admin route's body; a field left out is off (`entryError`: InternalFailure). */
export function validatePutEventsFaults(input: unknown): PutEventsFaults {
  const body = (input ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body))
    throw new Error('eventbridge faults: an object { entries, entryError, calls, count }');
  for (const key of Object.keys(body))
    if (!FIELDS.includes(key))
      throw new Error(`eventbridge faults: unknown field ${key} (${FIELDS.join(', ')})`);
  const rate = (name: 'entries' | 'calls') => {
    const value = body[name] ?? 0;
    if (typeof value !== 'number' || !(value >= 0 && value <= 1))
      throw new Error(`eventbridge faults: ${name} must be a number from 0 to 1`);
    return value;
  };
  const entryError = body.entryError ?? 'InternalFailure';
  if (!PUT_EVENTS_ENTRY_ERRORS.includes(entryError as PutEventsEntryError))
    throw new Error(`eventbridge faults: entryError must be one of ${PUT_EVENTS_ENTRY_ERRORS.join(', ')}`);
  const count = body.count;
  if (count !== undefined && !(Number.isInteger(count) && (count as number) >= 1))
    throw new Error('eventbridge faults: count must be a positive integer');
  return {
    entries: rate('entries'),
    entryError: entryError as PutEventsEntryError,
    calls: rate('calls'),
    ...(count !== undefined ? { count: count as number } : {}),
  };
}

/** What the faults did since they were last set. */
export interface PutEventsRefusals {
  entries: number;
  calls: number;
}

/** Draws a refusal of one kind: whether it is made (and counted), within `count`. */
export function refuses(
  faults: Readonly<PutEventsFaults>,
  kind: 'entries' | 'calls',
  refused: PutEventsRefusals,
  random: () => number = Math.random,
): boolean {
  const rate = faults[kind];
  if (rate <= 0) return false;
  if (faults.count !== undefined && refused.entries + refused.calls >= faults.count) return false;
  if (!(random() < rate)) return false;
  refused[kind]++;
  return true;
}
