import { ConcurrencyError } from './errors';
import {
  conflicted,
  type EventItem,
  type EventStore,
  KEY,
  type PendingAppend,
  TRANSACTION_ITEM_LIMIT,
  type TransactItem,
} from './event-store';

/**
 * The event store in memory, for the unit tests of use cases and saga steps
 * (they run in milliseconds, with no DynamoDB). It takes the very items
 * `AggregateStore.pending` and `unchanged` build for DynamoDB and keeps
 * DynamoDB's rules for them, as the shared contract test checks against both:
 * a key is written once (every `Put` is conditional on it being free, every
 * `ConditionCheck` holds while the key is free), several items are written all
 * or nothing, one item names at most one key of a transaction, a transaction
 * has at most 100 items, and a lost race is a `ConcurrencyError` naming the
 * aggregates that lost it. Items are copied in and out as DynamoDB would
 * (undefined attributes dropped), so no caller shares an object with the store.
 */
export class InMemoryEventStore implements EventStore {
  /** Per table, per aggregate id, its items by version. */
  private readonly tables = new Map<string, Map<string, Map<number, EventItem>>>();
  /** How many times each call was made: what a test may count, as the integration tests count DynamoDB's. */
  readonly calls = { newest: 0, at: 0, pages: 0, write: 0 };

  async newest(tableName: string, aggregateId: string) {
    this.calls.newest++;
    const items = this.itemsOf(tableName, aggregateId);
    let newest: EventItem | undefined;
    for (const item of items.values()) if (!newest || item.version > newest.version) newest = item;
    return newest && copy(newest);
  }

  async at(tableName: string, aggregateId: string, version: number) {
    this.calls.at++;
    const item = this.itemsOf(tableName, aggregateId).get(version);
    return item && copy(item);
  }

  async *pages(tableName: string, aggregateId: string) {
    this.calls.pages++;
    yield [...this.itemsOf(tableName, aggregateId).values()].sort((a, b) => a.version - b.version).map(copy);
  }

  async write(appends: readonly PendingAppend[]) {
    this.calls.write++;
    const items = appends.flatMap((a) => a.items);
    if (items.length === 0) return;
    if (items.length > TRANSACTION_ITEM_LIMIT) {
      throw new Error(`a transaction takes at most ${TRANSACTION_ITEM_LIMIT} items, not ${items.length}`);
    }
    const targets = items.map(target);
    const keys = new Set(targets.map((t) => `${t.tableName}\u0000${t.aggregateId}\u0000${t.version}`));
    if (keys.size < targets.length) throw new Error('a transaction names one item more than once');
    const taken = targets.map((t) => this.itemsOf(t.tableName, t.aggregateId).has(t.version));
    if (taken.some(Boolean)) {
      // A single put fails as a whole; a transaction names the aggregates whose items failed.
      if (items.length === 1 && items[0]!.Put) throw new ConcurrencyError(appends.map((a) => a.aggregateId));
      throw new ConcurrencyError(
        conflicted(
          appends,
          taken.map((t) => ({ Code: t ? 'ConditionalCheckFailed' : 'None' })),
        ),
      );
    }
    targets.forEach((t, i) => {
      const put = items[i]!.Put;
      if (!put) return;
      let aggregate = this.table(t.tableName).get(t.aggregateId);
      if (!aggregate) {
        aggregate = new Map();
        this.table(t.tableName).set(t.aggregateId, aggregate);
      }
      aggregate.set(t.version, copy(put.Item as unknown as EventItem));
    });
  }

  private table(tableName: string) {
    let table = this.tables.get(tableName);
    if (!table) {
      table = new Map();
      this.tables.set(tableName, table);
    }
    return table;
  }

  private itemsOf(tableName: string, aggregateId: string): ReadonlyMap<number, EventItem> {
    return this.tables.get(tableName)?.get(aggregateId) ?? new Map();
  }
}

/** The key an item of a pending append writes or checks; only the conditions the event store builds are understood. */
function target(item: TransactItem) {
  const operation = item.Put ?? item.ConditionCheck;
  const condition = operation?.ConditionExpression;
  if (!operation || condition !== 'attribute_not_exists(#id)') {
    throw new Error(
      `the in-memory event store takes only the event store's own items: ${JSON.stringify(item)}`,
    );
  }
  const key = (item.Put ? item.Put.Item : item.ConditionCheck!.Key) as Record<string, unknown>;
  return {
    tableName: String(operation.TableName),
    aggregateId: String(key[KEY.partition]),
    version: Number(key[KEY.sort]),
  };
}

/** A copy as DynamoDB would hand it back: plain data, undefined attributes dropped. */
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
