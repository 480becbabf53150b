import { type DynamoDbDocuments, isDynamoDbError } from './dynamodb-documents';
import { ConcurrencyError } from './errors';
import {
  conflicted,
  type EventItem,
  type EventStore,
  KEY,
  type PendingAppend,
  type TransactItem,
} from './event-store';

/** The event store on DynamoDB: what the functions run on. */
export class DynamoDbEventStore implements EventStore {
  constructor(private readonly client: DynamoDbDocuments) {}

  async newest(tableName: string, aggregateId: string) {
    const newest = await this.client.query({
      TableName: tableName,
      KeyConditionExpression: '#id = :id',
      ExpressionAttributeNames: { '#id': KEY.partition },
      ExpressionAttributeValues: { ':id': aggregateId },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
    });
    return newest.Items?.[0] as EventItem | undefined;
  }

  async at(tableName: string, aggregateId: string, version: number) {
    const { Item } = await this.client.get({
      TableName: tableName,
      Key: { [KEY.partition]: aggregateId, [KEY.sort]: version },
      ConsistentRead: true,
    });
    return Item as EventItem | undefined;
  }

  async *pages(tableName: string, aggregateId: string) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.query({
        TableName: tableName,
        KeyConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': KEY.partition },
        ExpressionAttributeValues: { ':id': aggregateId },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      yield (page.Items ?? []) as EventItem[];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  write(appends: readonly PendingAppend[]) {
    return appendAtomically(this.client, appends);
  }
}

/**
 * Writes several aggregates' appends all or nothing. One item goes as a plain
 * conditional put; more go in one `TransactWriteItems` (up to 100 items).
 * A lost race on any of them raises `ConcurrencyError` naming the aggregates.
 */
export async function appendAtomically(client: DynamoDbDocuments, appends: readonly PendingAppend[]) {
  const items = appends.flatMap((a) => a.items);
  if (items.length === 0) return;
  try {
    if (items.length === 1 && items[0]!.Put) {
      await client.put(items[0]!.Put);
      return;
    }
    await client.transactWrite({ TransactItems: items });
  } catch (error) {
    if (isDynamoDbError(error, 'ConditionalCheckFailedException')) {
      if (await madeByThisWrite(client, items[0])) return;
      throw new ConcurrencyError(appends.map((a) => a.aggregateId));
    }
    // A single write to an item a transaction is changing right now: lost to that writer, item not (yet) there.
    if (isDynamoDbError(error, 'TransactionConflictException')) {
      throw new ConcurrencyError(
        appends.map((a) => a.aggregateId),
        [],
      );
    }
    if (isDynamoDbError(error, 'TransactionCanceledException')) {
      const reasons = error.CancellationReasons ?? [];
      const lost = reasons.some(
        (r) => r.Code === 'ConditionalCheckFailed' || r.Code === 'TransactionConflict',
      );
      // All or nothing: one of its own items found in place means the whole transaction was made.
      const failed = items[reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed')];
      if (lost && (await madeByThisWrite(client, failed))) return;
      if (lost)
        throw new ConcurrencyError(
          conflicted(appends, reasons),
          conflicted(appends, reasons, 'ConditionalCheckFailed', false),
        );
    }
    throw error;
  }
}

/**
 * Whether the item `put` writes is already in place as this very write made
 * it (the same `eventId`, new for every item written): then the write was
 * made and its answer lost (a 500 or a reset connection after DynamoDB
 * committed it), and the SDK's retry failed the condition on its own item.
 * That retry found the write's effect, so the write succeeded; anyone
 * else's item at the key is a lost race. One consistent read, made only
 * after a condition failed.
 */
async function madeByThisWrite(client: DynamoDbDocuments, item: TransactItem | undefined) {
  const put = item?.Put;
  const eventId = put?.Item?.eventId;
  if (!put || typeof eventId !== 'string') return false;
  const { Item } = await client.get({
    TableName: put.TableName,
    Key: { [KEY.partition]: put.Item![KEY.partition], [KEY.sort]: put.Item![KEY.sort] },
    ConsistentRead: true,
    ProjectionExpression: 'eventId',
  });
  return Item?.eventId === eventId;
}
