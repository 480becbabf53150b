import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { documents } from './aws';
import { logger } from './powertools';
import { retryWithin } from './retries';

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
    await documents.send(new UpdateCommand(input));
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
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
 * Entries one UpdateItem writes at most. Each adds a guard of up to 71
 * characters to the condition, and DynamoDB refuses an expression over 4 KB
 * (`ValidationException`): a batch with all 64 shards of a product made
 * 4,169 bytes, and was written only after the stream mapping had bisected
 * it. 32 keep the condition near 2 KB; a 64-shard product's full batch is
 * two writes.
 */
export const ENTRIES_PER_UPDATE = 32;

/**
 * Writes several versioned entries of one view item in one UpdateItem (per
 * ENTRIES_PER_UPDATE of them), each only if newer than what the item holds
 * under that attribute (a string comparison, see VersionedEntry; an entry
 * that earlier versions stored as a map, with its version under `v`, by that
 * version); an item the entries are the first to write is created. When any
 * entry is not newer (a batch delivered again, or an older one after a newer
 * one) the write as a whole is refused, and each entry is then written alone
 * under its own guard, so that the newer ones still land and none goes back
 * in time.
 */
export async function upsertEntries(
  tableName: string,
  id: string,
  entries: readonly VersionedEntry[],
): Promise<void> {
  const update = async (some: readonly VersionedEntry[]) => {
    const names: Record<string, string> = { '#v': 'v' };
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const guards: string[] = [];
    some.forEach(({ attribute, version, entry }, i) => {
      names[`#e${i}`] = attribute;
      values[`:e${i}`] = entry;
      values[`:v${i}`] = version;
      sets.push(`#e${i} = :e${i}`);
      // A comparison of different types is false: the string one decides a string entry, the map's
      // version a map entry.
      guards.push(`(attribute_not_exists(#e${i}) OR #e${i} < :e${i} OR #e${i}.#v < :v${i})`);
    });
    return guardedUpdate({
      TableName: tableName,
      Key: { id },
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: guards.join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  };
  for (let from = 0; from < entries.length; from += ENTRIES_PER_UPDATE) {
    const some = entries.slice(from, from + ENTRIES_PER_UPDATE);
    if ((await update(some)) || some.length === 1) continue;
    for (const entry of some) await update([entry]);
  }
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
    retryWithin(context);
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
        logger.debug('projected', keys);
      } catch (error) {
        logger.error('projection failed', { ...keys, error: error as Error });
        failed.push(event.aggregateId);
      }
    }),
  );
  return failed;
}
