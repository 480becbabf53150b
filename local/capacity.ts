/**
 * DynamoDB's billing arithmetic, applied to the requests the local cloud
 * observes (the functions' own calls, metered in their sandboxes, and other
 * clients' calls through the local AWS endpoint), so that a run can be
 * priced as AWS would bill it on demand.
 *
 * Item size follows DynamoDB's documented rules: an attribute's name plus its
 * value; strings and binaries by their byte length, numbers by about one
 * byte per two significant digits plus one, booleans and nulls one byte, and
 * lists and maps 3 bytes plus 1 per element. A write costs one request unit
 * per KB, rounded up; inside `TransactWriteItems` it costs two.
 */

type AttributeValue = Record<string, unknown>;
type Item = Record<string, AttributeValue>;

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '');
  return Math.ceil(digits.replace(/0+$/, '').length / 2) + 1;
}

function valueSize(value: AttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8(String(v));
    case 'N':
      return numberSize(String(v));
    case 'B':
      return Buffer.from(String(v), 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (v as string[]).reduce((n, s) => n + utf8(s), 0);
    case 'NS':
      return (v as string[]).reduce((n, s) => n + numberSize(s), 0);
    case 'BS':
      return (v as string[]).reduce((n, s) => n + Buffer.from(s, 'base64').length, 0);
    case 'L':
      return 3 + (v as AttributeValue[]).reduce((n, e) => n + 1 + valueSize(e), 0);
    case 'M':
      return 3 + Object.entries(v as Item).reduce((n, [k, e]) => n + 1 + utf8(k) + valueSize(e), 0);
    default:
      return 0;
  }
}

/** The size DynamoDB bills an item (DynamoDB JSON) by, in bytes. */
export function itemSize(item: Item | undefined): number {
  if (!item) return 0;
  return Object.entries(item).reduce((n, [name, value]) => n + utf8(name) + valueSize(value), 0);
}

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

const CONSUMED = /"TableName":"([^"]+)","CapacityUnits":([0-9.]+)/g;

/**
 * Read units per table from the `ConsumedCapacity` DynamoDB Local returns
 * when asked for it (its read arithmetic matches AWS's: 0.5 per 4 KB
 * eventually consistent, 1 strongly consistent).
 */
export function consumedReadUnits(response: string): Map<string, number> {
  const units = new Map<string, number>();
  const at = response.lastIndexOf('"ConsumedCapacity"');
  if (at < 0) return units;
  for (const m of response.slice(at).matchAll(CONSUMED)) {
    units.set(m[1]!, (units.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return units;
}

/** The request body with `ReturnConsumedCapacity: TOTAL` added, unless the caller set it. */
export function askForConsumedCapacity(body: Buffer): Buffer {
  const text = body.toString('utf8');
  if (text.includes('"ReturnConsumedCapacity"')) return body;
  const open = text.indexOf('{');
  if (open < 0) return body;
  const rest = text.slice(open + 1).trimStart();
  const separator = rest.startsWith('}') ? '' : ',';
  return Buffer.from(`{"ReturnConsumedCapacity":"TOTAL"${separator}${rest}`, 'utf8');
}

/** The DynamoDB operations the counters bill as reads. */
export const READ_OPERATIONS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

/** The DynamoDB operations that write (and so wake the table's stream pollers). */
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

/** The tables a DynamoDB write touches, read from its input. */
export function tablesWritten(operation: string, input: Record<string, unknown>): string[] {
  switch (operation) {
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [String(input.TableName)];
    case 'BatchWriteItem':
      return Object.keys((input.RequestItems as Record<string, unknown>) ?? {});
    case 'TransactWriteItems':
      return [
        ...new Set(
          ((input.TransactItems as Record<string, { TableName?: string }>[]) ?? []).flatMap((item) =>
            Object.values(item).map((op) => String(op.TableName)),
          ),
        ),
      ];
    default:
      // PartiQL: the table is inside the statement; wake every poller.
      return ['*'];
  }
}
