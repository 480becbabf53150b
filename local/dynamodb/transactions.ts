import { createHash } from 'node:crypto';
import { Consumption, changeUnits, readUnits, writeUnits } from './capacity';
import type { Change, DynamoDbEngine, Input } from './engine';
import { DynamoDbError, validation } from './errors';
import { checkCondition, oneOf, repeats, updatedItem } from './items';
import { normalizeItem } from './normalize';
import { compileExpressions } from './request';
import type { Table } from './tables';
import { type Item, itemSize } from './values';

/** TransactWriteItems limits (API Reference): 100 actions, 4 MB in all; a token is kept 10 minutes. */
const MAX_ACTIONS = 100;
const MAX_BYTES = 4 * 1024 * 1024;
const TOKEN_LIFETIME_MS = 10 * 60 * 1000;

type Kind = 'ConditionCheck' | 'Put' | 'Delete' | 'Update';
const KINDS: readonly Kind[] = ['ConditionCheck', 'Put', 'Delete', 'Update'];

interface Action {
  readonly kind: Kind;
  readonly input: Input;
  readonly table: Table;
  readonly key: Item;
  readonly item?: Item;
}

/**
 * TransactWriteItems: every action's condition holds and all are applied,
 * or none is and the answer names each action's reason
 * (`TransactionCanceledException` with `CancellationReasons` in request
 * order: `None` for an action that was fine).
 */
export function transactWriteItems(engine: DynamoDbEngine, input: Input) {
  const list = transactItems(input);
  const token = clientRequestToken(engine, input);
  if (token?.repeat) return new Consumption().report(input, true);

  const actions = list.map((entry, index) => parseAction(engine, entry, index));
  oneOperationPerItem(actions);
  // "The aggregate size of the items in the transaction cannot exceed 4 MB": a put counts its item, the
  // other actions their key and the values their expressions carry.
  const bytes = actions.reduce(
    (n, a) => n + itemSize(a.item ?? a.key) + itemSize(a.input.ExpressionAttributeValues as Item | undefined),
    0,
  );
  if (bytes > MAX_BYTES) {
    throw validation('Transaction request size exceeds the maximum allowed size of 4 MB');
  }

  const changes: Change[] = [];
  const consumed = new Consumption();
  const reasons: Record<string, unknown>[] = [];
  let cancelled = false;
  for (const action of actions) {
    const before = action.table.items.get(action.key);
    try {
      const compiled = compileExpressions(action.input, {
        condition: true,
        update: action.kind === 'Update',
      });
      checkCondition(compiled, before, action.input);
      const after =
        action.kind === 'Put'
          ? action.item
          : action.kind === 'Update'
            ? updatedItem(action.table, action.key, before, compiled)
            : action.kind === 'Delete'
              ? undefined
              : before;
      if (action.kind === 'ConditionCheck') {
        consumed.add(action.table.name, writeUnits(itemSize(before), true));
      } else {
        consumed.addChange(action.table, changeUnits(action.table, before, after, true));
        if (before || after) changes.push({ table: action.table, before, after });
      }
      reasons.push({ Code: 'None' });
    } catch (error) {
      if (!(error instanceof DynamoDbError)) throw error;
      cancelled = true;
      if (error.type === 'ConditionalCheckFailedException') {
        reasons.push({ Code: 'ConditionalCheckFailed', Message: error.message, ...error.extra });
      } else if (error.type === 'ValidationException') {
        reasons.push({ Code: 'ValidationError', Message: error.message });
      } else {
        throw error;
      }
    }
  }
  if (cancelled) {
    throw new DynamoDbError(
      'TransactionCanceledException',
      `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      { CancellationReasons: reasons },
    );
  }
  engine.commit(changes);
  if (token) engine.transactionTokens.set(token.value, { fingerprint: token.fingerprint, at: Date.now() });
  return consumed.report(input, true);
}

/** TransactGetItems: up to 100 items read as of one moment, in request order. */
export function transactGetItems(engine: DynamoDbEngine, input: Input) {
  const list = transactItems(input);
  const gets = list.map((entry) => {
    const kinds = Object.keys(entry ?? {});
    if (kinds.length !== 1 || kinds[0] !== 'Get') {
      throw validation('TransactGetItems: each of TransactItems must be a Get');
    }
    const get = (entry as { Get: Input }).Get;
    const table = engine.tables.get(get.TableName);
    return { table, key: table.checkKey(get.Key), compiled: compileExpressions(get, { projection: true }) };
  });
  oneOperationPerItem(gets);
  const consumed = new Consumption();
  const responses = gets.map(({ table, key, compiled }) => {
    const item = table.items.get(key);
    consumed.add(table.name, readUnits(itemSize(item), true, true));
    return item ? { Item: compiled.projection ? compiled.projection(item) : item } : {};
  });
  engine.reportRead('TransactGetItems', consumed.byTable());
  return { Responses: responses, ...consumed.report(input, true) };
}

/** "Transaction request cannot include multiple operations on one item" (TransactWriteItems, TransactGetItems). */
function oneOperationPerItem(actions: readonly { table: Table; key: Item }[]) {
  if (repeats(actions.map(({ table, key }) => `${table.name}\u0000${table.idOf(key)}`))) {
    throw validation('Transaction request cannot include multiple operations on one item');
  }
}

function transactItems(input: Input): Record<string, unknown>[] {
  const list = input.TransactItems;
  if (!Array.isArray(list) || list.length === 0) {
    throw validation(
      "1 validation error detected: Value null at 'transactItems' failed to satisfy constraint: Member must not be null",
    );
  }
  if (list.length > MAX_ACTIONS) {
    throw validation(
      `1 validation error detected: Value '[...]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ACTIONS}`,
    );
  }
  return list as Record<string, unknown>[];
}

function parseAction(engine: DynamoDbEngine, entry: Record<string, unknown>, index: number): Action {
  const kinds = Object.keys(entry ?? {}).filter((k) => entry[k] !== undefined);
  if (kinds.length !== 1 || !KINDS.includes(kinds[0] as Kind)) {
    throw validation(
      `TransactItems[${index}] must have exactly one of ConditionCheck, Put, Delete or Update`,
    );
  }
  const kind = kinds[0] as Kind;
  const input = entry[kind] as Input;
  const table = engine.tables.get(input.TableName);
  oneOf(
    input.ReturnValuesOnConditionCheckFailure,
    ['NONE', 'ALL_OLD'],
    'ReturnValuesOnConditionCheckFailure',
  );
  if (kind === 'ConditionCheck' && input.ConditionExpression === undefined) {
    throw validation('The ConditionCheck operation requires a ConditionExpression');
  }
  if (kind === 'Put') {
    const item = normalizeItem(input.Item, 'Item');
    table.checkItem(item);
    return { kind, input, table, key: table.keyOf(item), item };
  }
  return { kind, input, table, key: table.checkKey(input.Key) };
}

/** The request's idempotency token: `repeat` when the same request came with it within 10 minutes. */
function clientRequestToken(engine: DynamoDbEngine, input: Input) {
  const value = input.ClientRequestToken;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 1 || value.length > 36) {
    throw validation(
      "1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36",
    );
  }
  const now = Date.now();
  for (const [t, seen] of engine.transactionTokens) {
    if (now - seen.at <= TOKEN_LIFETIME_MS) break;
    engine.transactionTokens.delete(t);
  }
  // A digest, not the request itself: every token is kept ten minutes, and a transaction's items
  // run to kilobytes (a flash sale's 200,000 reservations would hold half a gigabyte of them).
  const fingerprint = createHash('sha256').update(JSON.stringify(input.TransactItems)).digest('base64');
  const seen = engine.transactionTokens.get(value);
  if (seen && seen.fingerprint !== fingerprint) {
    throw new DynamoDbError(
      'IdempotentParameterMismatchException',
      'The request uses the same client token as a previous, but non-identical request.',
    );
  }
  return { value, fingerprint, repeat: seen !== undefined };
}
