/**
 * Duplicate delivery, as AWS's at-least-once delivery makes it
 * (`POST /_local/faults/duplicates`): a share of the stream batches a mapping
 * delivered is delivered again (as Lambda does when it retries a batch whose
 * answer it lost), and a share of the events a rule matched is delivered to
 * each target twice (EventBridge's at-least-once). Every consumer must be
 * idempotent; at rate 1 every consumer gets everything twice. Off by default.
 * The stream pollers and the bus read the settings at each delivery.
 */
export interface DuplicateDelivery {
  /** Share of stream batches delivered again after they succeeded, from 0 to 1. */
  streamRecords: number;
  /** Share of matched events delivered twice to every target of the rule, from 0 to 1. */
  busEvents: number;
  /**
   * The copy comes this late (ms), not at once: a stream batch delivered
   * again after the batches that followed it (out of order), an event's
   * second delivery after later events' first. 0 or absent: at once.
   */
  lateMs?: number;
}

export const noDuplicates = (): DuplicateDelivery => ({ streamRecords: 0, busEvents: 0 });

/** Checks the admin route's body; a field left out is set to 0 (off). */
export function validateDuplicates(input: unknown): DuplicateDelivery {
  const body = (input ?? {}) as Partial<Record<keyof DuplicateDelivery, unknown>>;
  if (typeof body !== 'object' || Array.isArray(body))
    throw new Error('duplicates: an object { streamRecords, busEvents }');
  const rate = (name: keyof DuplicateDelivery) => {
    const value = body[name] ?? 0;
    if (typeof value !== 'number' || !(value >= 0 && value <= 1))
      throw new Error(`duplicates: ${name} must be a number from 0 to 1`);
    return value;
  };
  for (const key of Object.keys(body)) {
    if (key !== 'streamRecords' && key !== 'busEvents' && key !== 'lateMs')
      throw new Error(`duplicates: unknown field ${key} (streamRecords, busEvents, lateMs)`);
  }
  const lateMs = body.lateMs ?? 0;
  if (typeof lateMs !== 'number' || !(lateMs >= 0 && lateMs <= 600_000))
    throw new Error('duplicates: lateMs must be a number of ms from 0 to 600000');
  return {
    streamRecords: rate('streamRecords'),
    busEvents: rate('busEvents'),
    ...(lateMs > 0 ? { lateMs } : {}),
  };
}
