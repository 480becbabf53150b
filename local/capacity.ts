/**
 * DynamoDB's billing arithmetic for writes, applied to the write requests the
 * local AWS endpoint serves (every caller's), so that a run can be priced as
 * AWS would bill it on demand, with the partition key of each item written
 * for the hot-key counters. Item size follows DynamoDB's documented rules
 * (local/dynamodb/values.ts); a write costs one request unit per KB, rounded
 * up; inside `TransactWriteItems` it costs two. (Reads are counted by the
 * engine itself, from what it read.)
 */
import type { Item } from './dynamodb/values';
import { itemSize } from './dynamodb/values';

const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** One item a write request touches: its table, partition key value and billed write units. */
export interface ItemWrite {
  readonly table: string;
  readonly key: string | undefined;
  readonly units: number;
  readonly transactional: boolean;
}

interface WriteOperation {
  TableName?: string;
  Item?: Item;
  Key?: Item;
  ExpressionAttributeValues?: Item;
}

/**
 * The items a DynamoDB write request writes, with their billed units. An
 * update is billed by the larger of the item before and after; the proxy
 * sees neither, so it counts the key plus the values the update sets.
 * A `ConditionCheck` writes nothing but is billed like a transactional write.
 */
export function itemWrites(
  operation: string,
  input: Record<string, unknown>,
  partitionKeyOf: (table: string) => string | undefined,
): ItemWrite[] {
  const keyOf = (table: string, item: Item | undefined) => {
    const name = partitionKeyOf(table);
    const value = name ? item?.[name] : undefined;
    return value ? String(Object.values(value)[0]) : undefined;
  };
  const sizeOf = (kind: string, op: WriteOperation) =>
    kind === 'Put' || kind === 'PutItem' || kind === 'PutRequest'
      ? itemSize(op.Item)
      : kind === 'Update' || kind === 'UpdateItem'
        ? itemSize(op.Key) + itemSize(op.ExpressionAttributeValues)
        : itemSize(op.Key);
  const one = (table: string, kind: string, op: WriteOperation, transactional: boolean): ItemWrite => ({
    table,
    key: keyOf(table, op.Item ?? op.Key),
    units: (transactional ? 2 : 1) * writeUnits(sizeOf(kind, op)),
    transactional,
  });
  switch (operation) {
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [one(String(input.TableName), operation, input as WriteOperation, false)];
    case 'TransactWriteItems':
      return ((input.TransactItems as Record<string, WriteOperation>[]) ?? []).flatMap((item) =>
        Object.entries(item).map(([kind, op]) => {
          const write = one(String(op.TableName), kind, op, true);
          // A condition check takes no partition key's write throughput.
          return kind === 'ConditionCheck' ? { ...write, key: undefined } : write;
        }),
      );
    case 'BatchWriteItem':
      return Object.entries(
        (input.RequestItems as Record<
          string,
          { PutRequest?: WriteOperation; DeleteRequest?: WriteOperation }[]
        >) ?? {},
      ).flatMap(([table, requests]) =>
        requests.map((r) =>
          r.PutRequest
            ? one(table, 'PutRequest', r.PutRequest, false)
            : one(table, 'DeleteRequest', r.DeleteRequest ?? {}, false),
        ),
      );
    default:
      return [];
  }
}

/** The DynamoDB operations that write (and are counted). */
export const WRITE_OPERATIONS = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'ExecuteStatement',
  'BatchExecuteStatement',
  'ExecuteTransaction',
]);
