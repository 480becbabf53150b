import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { documents } from './aws';
import { isDynamoDbError } from './dynamodb-documents';
import { logger, startInvocation } from './powertools';

/**
 * Writes `attributes` to a view item only if `version` is newer than the one
 * it holds under `versionAttribute`. Every stored event carries the whole
 * state after it, so a projector writes that state with this guard: a repeated
 * or late record then changes nothing, whatever order batches come in.
 * `remove` names attributes to drop in the same write. Returns whether it wrote.
 */
export async function upsertView(
  tableName: string,
  id: string,
  versionAttribute: string,
  version: number,
  attributes: Record<string, unknown>,
  remove: readonly string[] = [],
): Promise<boolean> {
  const names: Record<string, string> = { '#v': versionAttribute };
  const values: Record<string, unknown> = { ':v': version };
  const sets = ['#v = :v'];
  Object.entries(attributes).forEach(([name, value], i) => {
    names[`#a${i}`] = name;
    values[`:a${i}`] = value;
    sets.push(`#a${i} = :a${i}`);
  });
  const removes = remove.map((name, i) => {
    names[`#r${i}`] = name;
    return `#r${i}`;
  });
  return guardedUpdate({
    TableName: tableName,
    Key: { id },
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: 'attribute_not_exists(#v) OR #v < :v',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
}

/** An UpdateItem under a condition: whether it wrote (false when the condition refused it). */
async function guardedUpdate(input: UpdateCommandInput): Promise<boolean> {
  try {
    await documents.update(input);
    return true;
  } catch (error) {
    if (isDynamoDbError(error, 'ConditionalCheckFailedException')) return false;
    throw error;
  }
}

/** An event item as the table stream delivers it (NEW_IMAGE). */
export interface EventRecord {
  readonly aggregateId: string;
  readonly aggregateType: string;
  readonly version: number;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: Record<string, unknown>;
  readonly eventId: string;
  readonly occurredAt: string;
  readonly correlationId?: string;
  readonly state?: unknown;
  readonly foldVersion?: number;
}

export const eventOf = (record: DynamoDBRecord): EventRecord | undefined =>
  record.eventName === 'INSERT' && record.dynamodb?.NewImage
    ? (unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>) as EventRecord)
    : undefined;

/**
 * One entry of `upsertEntries`: a top-level string attribute whose value
 * sorts after every older value of the same attribute (it begins with a key
 * of its version that sorts as the version does).
 */
export interface VersionedEntry {
  readonly attribute: string;
  readonly version: number;
  readonly entry: string;
}

/**
 * DynamoDB's bounds on one condition expression: 4 KB of text and 300
 * operators (`ValidationException` past either). A batch with all 64 shards
 * of a product once made a 4,169-character condition (and 383 operators,
 * each guard also taking a map entry's version): refused, and written only
 * after the stream mapping had bisected the batch. `upsertEntries` keeps
 * each write within both; with the short guard below, 64 entries take 2,717
 * characters and 255 operators, so a 64-shard product's batch stays one
 * write of its item, as a flash sale's hot product needs (split in two, its
 * item took 3.6% of the views table's writes in the hot sale, over the 1/32
 * a key may take).
 */
export const CONDITION_BOUNDS = { chars: 4_000, operators: 300 } as const;

/** Entry `i` absent, or older: its string sorts before the new one. */
const batchGuard = (i: number) => `(attribute_not_exists(#${i}) OR #${i}<:${i})`;
/** The operators of a batch guard (a function, a comparison, an OR) and of the AND that joins it. */
const GUARD_OPERATORS = 3;
const AND = ' AND ';
/**
 * One entry alone: also older if earlier versions stored it as a map with
 * its version under `v` (a map never compares below a string, so the batch
 * guard refuses such an entry and it comes here, once: replaced, it is a string).
 */
const LEGACY_AWARE_GUARD = '(attribute_not_exists(#0) OR #0<:0 OR #0.#v<:v0)';

/** The condition of a batch write of `count` entries. */
export const batchCondition = (count: number) =>
  Array.from({ length: count }, (_, i) => batchGuard(i)).join(AND);

/**
 * Writes several versioned entries of one view item in one UpdateItem (more
 * only past CONDITION_BOUNDS), each only if newer than what the item holds
 * under that attribute (a string comparison, see VersionedEntry); an item the
 * entries are the first to write is created. When any entry is not newer (a
 * batch delivered again, an older one after a newer one, or an entry that
 * earlier versions stored as a map) the write as a whole is refused, and each
 * entry is then written alone under its own guard, which also takes a map
 * entry's version, so that the newer ones still land and none goes back in
 * time.
 */
export async function upsertEntries(
  tableName: string,
  id: string,
  entries: readonly VersionedEntry[],
): Promise<void> {
  const update = (some: readonly VersionedEntry[], condition: string) =>
    guardedUpdate({
      TableName: tableName,
      Key: { id },
      UpdateExpression: `SET ${some.map((_, i) => `#${i}=:${i}`).join(', ')}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: Object.fromEntries(some.map(({ attribute }, i) => [`#${i}`, attribute])),
      ExpressionAttributeValues: Object.fromEntries(some.map(({ entry }, i) => [`:${i}`, entry])),
    });
  const alone = ({ attribute, version, entry }: VersionedEntry) =>
    guardedUpdate({
      TableName: tableName,
      Key: { id },
      UpdateExpression: 'SET #0=:0',
      ConditionExpression: LEGACY_AWARE_GUARD,
      ExpressionAttributeNames: { '#0': attribute, '#v': 'v' },
      ExpressionAttributeValues: { ':0': entry, ':v0': version },
    });
  for (const some of withinConditionBounds(entries)) {
    if (some.length > 1 && (await update(some, batchCondition(some.length)))) continue;
    for (const entry of some) await alone(entry);
  }
}

/**
 * The most entries one batch write takes within CONDITION_BOUNDS. A guard's
 * length and operators depend only on its place in the condition, so the
 * bound is the same for every write.
 */
const ENTRIES_PER_WRITE = (() => {
  let count = 1;
  let chars = batchGuard(0).length;
  for (;;) {
    const next = chars + AND.length + batchGuard(count).length;
    if (next > CONDITION_BOUNDS.chars || (count + 1) * (GUARD_OPERATORS + 1) - 1 > CONDITION_BOUNDS.operators)
      return count;
    chars = next;
    count++;
  }
})();

/** The entries in runs whose batch condition stays within CONDITION_BOUNDS, in order. */
export function withinConditionBounds(entries: readonly VersionedEntry[]): VersionedEntry[][] {
  const runs: VersionedEntry[][] = [];
  for (let from = 0; from < entries.length; from += ENTRIES_PER_WRITE)
    runs.push(entries.slice(from, from + ENTRIES_PER_WRITE));
  return runs;
}

/**
 * The shell of every projector: keeps only the newest event of each
 * aggregate in the batch (its state supersedes the others'), hands them to
 * `project` together (which may write several aggregates' states in one
 * call), and reports the first record of each aggregate `project` names as
 * failed, so that the stream retries from there (ReportBatchItemFailures).
 */
export function projector(
  project: (events: readonly EventRecord[]) => Promise<{ readonly failed: readonly string[] }>,
) {
  return async (stream: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> => {
    startInvocation(context);
    const newest = new Map<string, EventRecord>();
    const firstRecord = new Map<string, string>();
    for (const record of stream.Records) {
      const event = eventOf(record);
      if (!event) continue;
      const seen = newest.get(event.aggregateId);
      if (!seen || seen.version < event.version) newest.set(event.aggregateId, event);
      if (!firstRecord.has(event.aggregateId))
        firstRecord.set(event.aggregateId, record.dynamodb!.SequenceNumber!);
    }
    const { failed } = await project([...newest.values()]);
    return {
      batchItemFailures: failed.map((aggregateId) => ({ itemIdentifier: firstRecord.get(aggregateId)! })),
    };
  };
}

/**
 * Runs `project` for each of `events` at once, logging each failure with the
 * event's keys (its correlation id ties it to the request and saga that
 * caused it); returns the aggregates whose projection failed.
 */
export async function eachProjected(
  events: readonly EventRecord[],
  project: (event: EventRecord) => Promise<void>,
): Promise<string[]> {
  const failed: string[] = [];
  await Promise.all(
    events.map(async (event) => {
      const keys = { aggregateId: event.aggregateId, type: event.type, correlationId: event.correlationId };
      try {
        await project(event);
        // At INFO, so that a request's trail (`npm run logs -- -c ID`) shows its views updated; prod logs WARN.
        logger.info('projected', keys);
      } catch (error) {
        logger.error('projection failed', { ...keys, error: error as Error });
        failed.push(event.aggregateId);
      }
    }),
  );
  return failed;
}
