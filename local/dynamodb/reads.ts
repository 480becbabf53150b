import { Consumption, readUnits } from './capacity';
import type { Collection } from './collection';
import type { DynamoDbEngine, Input } from './engine';
import { validation } from './errors';
import { oneOf } from './items';
import { normalizeItem } from './normalize';
import { compileExpressions } from './request';
import type { Index, Table } from './tables';
import { type Item, itemSize, keyString } from './values';

/** "A single Query operation will read up to ... a maximum of 1 MB of data" (Query, API Reference); Scan too. */
const PAGE_BYTES = 1024 * 1024;

interface Source {
  readonly table: Table;
  readonly index?: Index;
  readonly collection: Collection;
}

/** The table, or the index a Query or Scan names. */
function sourceOf(engine: DynamoDbEngine, input: Input): Source {
  const table = engine.tables.get(input.TableName);
  if (input.IndexName === undefined) return { table, collection: table.items };
  const index = table.indexes.get(String(input.IndexName));
  if (!index) {
    throw validation(`The table does not have the specified index: ${String(input.IndexName)}`);
  }
  if (index.global && input.ConsistentRead === true) {
    throw validation('Consistent reads are not supported on global secondary indexes');
  }
  return { table, index, collection: index.collection };
}

/** The key a page ends at: the table's keys, and the index's when reading an index. */
function keyOfEntry(source: Source, item: Item): Item {
  const key = source.table.keyOf(item);
  if (source.index) {
    const { hash, range } = source.index.collection.key;
    key[hash] = item[hash]!;
    if (range) key[range] = item[range]!;
  }
  return key;
}

function exclusiveStartKey(source: Source, value: unknown): Item | undefined {
  if (value === undefined) return undefined;
  const key = normalizeItem(value, 'ExclusiveStartKey');
  const expected = new Set(Object.keys(keyOfEntry(source, key)));
  if (Object.keys(key).length !== expected.size || Object.keys(key).some((k) => !expected.has(k))) {
    throw validation(
      'The provided starting key is invalid: The provided key element does not match the schema',
    );
  }
  return key;
}

function limitOf(input: Input): number {
  if (input.Limit === undefined) return Number.POSITIVE_INFINITY;
  const limit = input.Limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw validation(
      `1 validation error detected: Value '${String(limit)}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1`,
    );
  }
  return limit;
}

/**
 * Reads entries until the limit (counted before the filter, as DynamoDB
 * counts it) or the 1 MB page, and answers with the page and, if the read
 * stopped early, the key to resume from.
 */
function readPage(
  engine: DynamoDbEngine,
  operation: string,
  source: Source,
  input: Input,
  entries: Iterable<Item>,
  filter?: (item: Item) => boolean,
  projection?: (item: Item) => Item,
) {
  const limit = limitOf(input);
  const select = oneOf(
    input.Select,
    ['ALL_ATTRIBUTES', 'ALL_PROJECTED_ATTRIBUTES', 'SPECIFIC_ATTRIBUTES', 'COUNT'],
    'Select',
  );
  if (select === 'SPECIFIC_ATTRIBUTES' && !projection) {
    throw validation('SPECIFIC_ATTRIBUTES requires a ProjectionExpression or AttributesToGet');
  }
  if (select === 'ALL_ATTRIBUTES' && source.index && source.index.projection.ProjectionType !== 'ALL') {
    throw validation(
      'One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index ' +
        source.index.name +
        ' because its projection type is not ALL',
    );
  }
  const items: Item[] = [];
  let matched = 0;
  let scanned = 0;
  let bytes = 0;
  let last: Item | undefined;
  for (const stored of entries) {
    if (scanned >= limit || bytes >= PAGE_BYTES) break;
    const entry = source.index ? source.table.project(source.index, stored) : stored;
    scanned++;
    bytes += itemSize(entry);
    last = entry;
    if (filter && !filter(entry)) continue;
    matched++;
    if (select !== 'COUNT') items.push(projection ? projection(entry) : entry);
  }
  const stoppedEarly = last !== undefined && (scanned >= limit || bytes >= PAGE_BYTES);
  const consumed = new Consumption();
  consumed.add(source.table.name, readUnits(bytes, input.ConsistentRead === true), source.index?.name);
  engine.reportRead(operation, consumed.byTable());
  return {
    ...(select === 'COUNT' ? {} : { Items: items }),
    Count: matched,
    ScannedCount: scanned,
    ...(stoppedEarly ? { LastEvaluatedKey: keyOfEntry(source, last!) } : {}),
    ...consumed.report(input, false),
  };
}

/** Query (API Reference): one partition of a table or index, in sort-key order. */
export function query(engine: DynamoDbEngine, input: Input) {
  const source = sourceOf(engine, input);
  if (input.KeyConditionExpression === undefined) {
    throw validation(
      'Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.',
    );
  }
  const compiled = compileExpressions(input, {
    keyCondition: { ...source.collection.key, types: Object.fromEntries(source.table.keyTypes) },
    filter: true,
    projection: true,
  });
  const keyCondition = compiled.keyCondition!;
  const forward = input.ScanIndexForward !== false;
  const start = exclusiveStartKey(source, input.ExclusiveStartKey);
  if (start && keyString(start[source.collection.key.hash]!) !== keyString(keyCondition.partitionValue)) {
    throw validation(
      'The provided starting key is invalid: The provided starting key does not match the range key predicate',
    );
  }
  const entries = source.collection.query(keyCondition.partitionValue, keyCondition.sort, forward, start);
  return readPage(engine, 'Query', source, input, entries, compiled.filter, compiled.projection);
}

/** Scan: every item of a table or index, partition by partition; `Segment`/`TotalSegments` split it. */
export function scan(engine: DynamoDbEngine, input: Input) {
  const source = sourceOf(engine, input);
  const compiled = compileExpressions(input, { filter: true, projection: true });
  const start = exclusiveStartKey(source, input.ExclusiveStartKey);
  const segments = segmentOf(input);
  const entries = segments
    ? filterEntries(
        source.collection.scan(start),
        (item) =>
          segmentHash(keyString(item[source.collection.key.hash]!)) % segments.total === segments.segment,
      )
    : source.collection.scan(start);
  return readPage(engine, 'Scan', source, input, entries, compiled.filter, compiled.projection);
}

function* filterEntries(entries: Iterable<Item>, keep: (item: Item) => boolean): Generator<Item> {
  for (const item of entries) if (keep(item)) yield item;
}

function segmentOf(input: Input): { segment: number; total: number } | undefined {
  if (input.Segment === undefined && input.TotalSegments === undefined) return undefined;
  const segment = Number(input.Segment);
  const total = Number(input.TotalSegments);
  if (
    !Number.isInteger(total) ||
    total < 1 ||
    total > 1_000_000 ||
    !Number.isInteger(segment) ||
    segment < 0 ||
    segment >= total
  ) {
    throw validation(
      'The Segment parameter is required but was not present in the request when parameter TotalSegments is present',
    );
  }
  return { segment, total };
}

function segmentHash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
