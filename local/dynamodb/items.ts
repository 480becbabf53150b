import { Consumption, changeUnits, readUnits } from './capacity';
import type { DynamoDbEngine, Input } from './engine';
import { DynamoDbError, validation } from './errors';
import { type Path, projectPaths } from './expressions';
import { normalizeItem } from './normalize';
import { type Compiled, compileExpressions } from './request';
import type { Table } from './tables';
import { type Item, itemSize, valuesEqual } from './values';

/** PutItem (API Reference): replaces the whole item, under an optional condition. */
export function putItem(engine: DynamoDbEngine, input: Input) {
  const table = engine.tables.get(input.TableName);
  const item = normalizeItem(input.Item, 'Item');
  table.checkItem(item);
  const returnValues = oneOf(input.ReturnValues, ['NONE', 'ALL_OLD'], 'ReturnValues');
  const compiled = compileExpressions(input, { condition: true });
  const before = table.items.get(table.keyOf(item));
  checkCondition(compiled, before, input);
  const consumed = new Consumption();
  consumed.addChange(table, changeUnits(table, before, item, false));
  engine.commit([{ table, before, after: item }]);
  return {
    ...(returnValues === 'ALL_OLD' && before ? { Attributes: before } : {}),
    ...consumed.report(input, false),
  };
}

/** GetItem: the item with this key, or no `Item` at all. */
export function getItem(engine: DynamoDbEngine, input: Input) {
  const table = engine.tables.get(input.TableName);
  const key = table.checkKey(input.Key);
  const compiled = compileExpressions(input, { projection: true });
  const item = table.items.get(key);
  const consumed = new Consumption();
  consumed.add(table.name, readUnits(itemSize(item), input.ConsistentRead === true));
  engine.reportRead('GetItem', consumed.byTable());
  return {
    ...(item ? { Item: compiled.projection ? compiled.projection(item) : item } : {}),
    ...consumed.report(input, false),
  };
}

/** UpdateItem: edits an item in place (creating it if absent), under an optional condition. */
export function updateItem(engine: DynamoDbEngine, input: Input) {
  const table = engine.tables.get(input.TableName);
  const key = table.checkKey(input.Key);
  const returnValues = oneOf(
    input.ReturnValues,
    ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'],
    'ReturnValues',
  );
  const compiled = compileExpressions(input, { condition: true, update: true });
  const before = table.items.get(key);
  checkCondition(compiled, before, input);
  const after = updatedItem(table, key, before, compiled);
  const consumed = new Consumption();
  consumed.addChange(table, changeUnits(table, before, after, false));
  engine.commit([{ table, before, after }]);
  return {
    ...returnedAttributes(returnValues, before, after, compiled.update?.paths ?? []),
    ...consumed.report(input, false),
  };
}

/** DeleteItem: removes the item with this key (nothing to remove is not an error). */
export function deleteItem(engine: DynamoDbEngine, input: Input) {
  const table = engine.tables.get(input.TableName);
  const key = table.checkKey(input.Key);
  const returnValues = oneOf(input.ReturnValues, ['NONE', 'ALL_OLD'], 'ReturnValues');
  const compiled = compileExpressions(input, { condition: true });
  const before = table.items.get(key);
  checkCondition(compiled, before, input);
  const consumed = new Consumption();
  consumed.addChange(table, changeUnits(table, before, undefined, false));
  if (before) engine.commit([{ table, before, after: undefined }]);
  return {
    ...(returnValues === 'ALL_OLD' && before ? { Attributes: before } : {}),
    ...consumed.report(input, false),
  };
}

/** The item an update makes of `before` (or of the bare key), with its keys untouched and its size checked. */
export function updatedItem(table: Table, key: Item, before: Item | undefined, compiled: Compiled): Item {
  if (!compiled.update) {
    // UpdateItem with no update expression still creates the item (its key alone).
    return before ?? key;
  }
  const after = normalizeItem(compiled.update(before ?? key), 'UpdateExpression');
  for (const name of Object.keys(key)) {
    if (!after[name] || !valuesEqual(after[name]!, key[name]!)) {
      throw validation(
        `One or more parameter values were invalid: Cannot update attribute ${name}. This attribute is part of the key`,
      );
    }
  }
  table.checkItem(after);
  return after;
}

/** Throws ConditionalCheckFailedException (with the item, when asked) unless the condition holds. */
export function checkCondition(compiled: Compiled, before: Item | undefined, input: Input) {
  if (!compiled.condition || compiled.condition(before)) return;
  const onFailure = oneOf(
    input.ReturnValuesOnConditionCheckFailure,
    ['NONE', 'ALL_OLD'],
    'ReturnValuesOnConditionCheckFailure',
  );
  throw new DynamoDbError(
    'ConditionalCheckFailedException',
    'The conditional request failed',
    onFailure === 'ALL_OLD' && before ? { Item: before } : {},
  );
}

/**
 * UpdateItem's `ReturnValues`: the UPDATED_ forms return only what the update
 * expression's paths name, nested structure kept ("Returns only the updated
 * attributes", UpdateItem, API Reference).
 */
function returnedAttributes(mode: string, before: Item | undefined, after: Item, updated: readonly Path[]) {
  const attributes =
    mode === 'ALL_OLD'
      ? before
      : mode === 'ALL_NEW'
        ? after
        : mode === 'UPDATED_OLD'
          ? before && projectPaths(before, updated)
          : mode === 'UPDATED_NEW'
            ? projectPaths(after, updated)
            : undefined;
  return attributes && Object.keys(attributes).length > 0 ? { Attributes: attributes } : {};
}

/** A enum-valued parameter, defaulting to NONE, as DynamoDB validates it. */
export function oneOf(value: unknown, allowed: readonly string[], name: string): string {
  if (value === undefined) return 'NONE';
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw validation(
      `1 validation error detected: Value '${String(value)}' at '${name[0]!.toLowerCase()}${name.slice(1)}' failed to satisfy constraint: Member must satisfy enum value set: [${allowed.join(', ')}]`,
    );
  }
  return value;
}

/** BatchGetItem limits ("BatchGetItem", API Reference): 100 keys, a 16 MB answer. */
const BATCH_GET_KEYS = 100;
const BATCH_GET_BYTES = 16 * 1024 * 1024;

export function batchGetItem(engine: DynamoDbEngine, input: Input) {
  const requests = requestItems(input.RequestItems, 'BatchGetItem') as Record<
    string,
    Input & { Keys?: unknown }
  >;
  let count = 0;
  const work = Object.entries(requests).map(([name, request]) => {
    const table = engine.tables.get(name);
    if (!Array.isArray(request.Keys) || request.Keys.length === 0) {
      throw validation(
        "1 validation error detected: Value at 'requestItems.keys' failed to satisfy constraint: Member must have length greater than or equal to 1",
      );
    }
    const keys = request.Keys.map((k) => table.checkKey(k));
    count += keys.length;
    distinct(table, keys);
    return { table, request, keys, compiled: compileExpressions(request, { projection: true }) };
  });
  if (count > BATCH_GET_KEYS) {
    throw validation('Too many items requested for the BatchGetItem call');
  }
  const consumed = new Consumption();
  const responses: Record<string, Item[]> = {};
  const unprocessed: Record<string, Input> = {};
  let bytes = 0;
  for (const { table, request, keys, compiled } of work) {
    responses[table.name] = [];
    for (const [i, key] of keys.entries()) {
      if (bytes > BATCH_GET_BYTES) {
        // Past 16 MB the rest is unprocessed, to be asked for again (as DynamoDB answers a large batch).
        const { Keys: _all, ...rest } = request;
        unprocessed[table.name] = { ...rest, Keys: keys.slice(i) };
        break;
      }
      const item = table.items.get(key);
      consumed.add(table.name, readUnits(itemSize(item), request.ConsistentRead === true));
      if (!item) continue;
      bytes += itemSize(item);
      responses[table.name]!.push(compiled.projection ? compiled.projection(item) : item);
    }
  }
  engine.reportRead('BatchGetItem', consumed.byTable());
  return { Responses: responses, UnprocessedKeys: unprocessed, ...consumed.report(input, true) };
}

/** BatchWriteItem: up to 25 puts and deletes, each applied on its own (not a transaction). */
export function batchWriteItem(engine: DynamoDbEngine, input: Input) {
  const requests = requestItems(input.RequestItems, 'BatchWriteItem') as Record<string, unknown>;
  let count = 0;
  const writes: { table: Table; key: Item; item?: Item }[] = [];
  for (const [name, list] of Object.entries(requests)) {
    const table = engine.tables.get(name);
    if (!Array.isArray(list) || list.length === 0) {
      throw validation(
        "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
      );
    }
    const keys: Item[] = [];
    for (const request of list as { PutRequest?: { Item?: unknown }; DeleteRequest?: { Key?: unknown } }[]) {
      count++;
      const kinds = Object.keys(request ?? {});
      if (kinds.length !== 1 || !(request.PutRequest || request.DeleteRequest)) {
        throw validation(
          'Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes',
        );
      }
      if (request.PutRequest) {
        const item = normalizeItem(request.PutRequest.Item, 'Item');
        table.checkItem(item);
        const key = table.keyOf(item);
        keys.push(key);
        writes.push({ table, key, item });
      } else {
        const key = table.checkKey(request.DeleteRequest!.Key);
        keys.push(key);
        writes.push({ table, key });
      }
    }
    distinct(table, keys);
  }
  if (count > 25) throw validation('Too many items requested for the BatchWriteItem call');
  const consumed = new Consumption();
  for (const { table, key, item } of writes) {
    const before = table.items.get(key);
    consumed.addChange(table, changeUnits(table, before, item, false));
    if (before || item) engine.commit([{ table, before, after: item }]);
  }
  return { UnprocessedItems: {}, ...consumed.report(input, true) };
}

function requestItems(value: unknown, operation: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Object.keys(value).length === 0) {
    throw validation(
      `1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must not be null (${operation})`,
    );
  }
  return value as Record<string, unknown>;
}

/** "Provided list of item keys contains duplicates": a batch names each item once. */
function distinct(table: Table, keys: Item[]) {
  if (repeats(keys.map((key) => table.idOf(key)))) {
    throw validation('Provided list of item keys contains duplicates');
  }
}

/** Whether any id comes twice. */
export const repeats = (ids: readonly string[]) => new Set(ids).size !== ids.length;
