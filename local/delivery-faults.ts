/**
 * Deliveries that fail until they end as dead letters
 * (`POST /_local/faults/deliveries`): poison stream records, each of which
 * its consumer fails on every time it is delivered (the mapping retries,
 * bisects, and gives the record up to its on-failure destination), and a
 * share of a rule's target deliveries failing (retried, then sent to the
 * target's dead-letter queue). Lifted ({}), everything is delivered again:
 * what is left in the queues is `npm run redrive`'s to deliver. Off by
 * default; the pollers and the bus read the settings at each delivery.
 */
export interface DeliveryFaults {
  /** How many stream records to poison (the next ones delivered to a matching mapping). */
  poisonRecords: number;
  /** Only mappings whose function's logical id starts with this (default: any). */
  poisonFunction?: string;
  /** Share of target deliveries that fail, from 0 to 1. */
  failingTargets: number;
  /** Only targets of rules whose logical id starts with this (default: any). */
  failingRule?: string;
}

export const noDeliveryFaults = (): DeliveryFaults => ({ poisonRecords: 0, failingTargets: 0 });

const FIELDS = ['poisonRecords', 'poisonFunction', 'failingTargets', 'failingRule'];

export function validateDeliveryFaults(input: unknown): DeliveryFaults {
  const body = (input ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body))
    throw new Error(`delivery faults: an object { ${FIELDS.join(', ')} }`);
  for (const key of Object.keys(body))
    if (!FIELDS.includes(key))
      throw new Error(`delivery faults: unknown field ${key} (${FIELDS.join(', ')})`);
  const poisonRecords = body.poisonRecords ?? 0;
  if (!Number.isInteger(poisonRecords) || (poisonRecords as number) < 0)
    throw new Error('delivery faults: poisonRecords must be a whole number');
  const failingTargets = body.failingTargets ?? 0;
  if (typeof failingTargets !== 'number' || !(failingTargets >= 0 && failingTargets <= 1))
    throw new Error('delivery faults: failingTargets must be a number from 0 to 1');
  for (const name of ['poisonFunction', 'failingRule'] as const)
    if (body[name] !== undefined && typeof body[name] !== 'string')
      throw new Error(`delivery faults: ${name} must be a string`);
  return {
    poisonRecords: poisonRecords as number,
    failingTargets,
    ...(body.poisonFunction !== undefined ? { poisonFunction: body.poisonFunction as string } : {}),
    ...(body.failingRule !== undefined ? { failingRule: body.failingRule as string } : {}),
  };
}

/**
 * The poison records of the cloud: chosen at delivery while the fault's
 * budget lasts, then failed on every time they are delivered, until the
 * fault is lifted (`clear`).
 */
export class PoisonRecords {
  private readonly poisonedKeys = new Set<string>();
  /** Records poisoned since the cloud started (what `GET /_local/faults` reports as injected). */
  ever = 0;

  constructor(private readonly faults: Readonly<DeliveryFaults>) {}

  /**
   * The poison record among `sequenceNumbers` of `streamArn` delivered to
   * `functionId`, if any: one already poisoned, or the first, newly
   * poisoned, while the budget lasts.
   */
  poisonIn(functionId: string, streamArn: string, sequenceNumbers: readonly string[]): string | undefined {
    const key = (seq: string) => `${streamArn} ${seq}`;
    const known = sequenceNumbers.find((seq) => this.poisonedKeys.has(key(seq)));
    if (known) return known;
    if (this.faults.poisonRecords <= this.poisonedKeys.size) return undefined;
    if (this.faults.poisonFunction && !functionId.startsWith(this.faults.poisonFunction)) return undefined;
    const first = sequenceNumbers[0];
    if (first === undefined) return undefined;
    this.poisonedKeys.add(key(first));
    this.ever++;
    return first;
  }

  /** The record among `sequenceNumbers` already poisoned, if any (none newly poisoned: a redrive's check). */
  poisoned(streamArn: string, sequenceNumbers: readonly string[]): string | undefined {
    return sequenceNumbers.find((seq) => this.poisonedKeys.has(`${streamArn} ${seq}`));
  }

  clear() {
    this.poisonedKeys.clear();
  }
}

/** Whether this delivery of a target of `ruleLogicalId` fails (`random` in [0, 1), for tests). */
export function targetFails(
  faults: Readonly<DeliveryFaults>,
  ruleLogicalId: string,
  random: () => number = Math.random,
): boolean {
  if (faults.failingTargets <= 0) return false;
  if (faults.failingRule && !ruleLogicalId.startsWith(faults.failingRule)) return false;
  return random() < faults.failingTargets;
}
