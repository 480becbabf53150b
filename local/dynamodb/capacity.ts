import type { Input } from './engine';
import type { Table } from './tables';
import { type Item, itemSize } from './values';

/**
 * Capacity as DynamoDB reports it ("Read/write capacity mode", Developer
 * Guide): a read unit per 4 KB read strongly (half for an eventually
 * consistent read, twice for a transactional one), a write unit per 1 KB
 * written (twice in a transaction); an item is rounded up on its own in
 * GetItem and the batch calls, a Query or Scan rounds up the sum of the items
 * it read. A write to an item that a global secondary index holds also
 * writes the index.
 */
export const readUnits = (bytes: number, consistent: boolean, transactional = false) =>
  Math.max(1, Math.ceil(bytes / 4096)) * (transactional ? 2 : consistent ? 1 : 0.5);

export const writeUnits = (bytes: number, transactional = false) =>
  Math.max(1, Math.ceil(bytes / 1024)) * (transactional ? 2 : 1);

/** Write units of one item's change, the table's and its indexes'. */
export function changeUnits(
  table: Table,
  before: Item | undefined,
  after: Item | undefined,
  transactional: boolean,
): { table: number; indexes: Map<string, number> } {
  const units = writeUnits(Math.max(itemSize(before), itemSize(after)), transactional);
  const indexes = new Map<string, number>();
  for (const index of table.indexes.values()) {
    const held = [before, after].filter((i): i is Item => i !== undefined && index.collection.holds(i));
    if (held.length === 0) continue;
    const size = Math.max(...held.map((i) => itemSize(table.project(index, i))));
    // An index key that changed is a delete and a put in the index.
    const moved =
      before &&
      after &&
      index.collection.holds(before) &&
      index.collection.holds(after) &&
      changedKey(index.collection.key, before, after);
    indexes.set(index.name, writeUnits(size, transactional) * (moved ? 2 : 1));
  }
  return { table: units, indexes };
}

function changedKey(key: { hash: string; range?: string }, a: Item, b: Item) {
  const same = (name: string) => JSON.stringify(a[name]) === JSON.stringify(b[name]);
  return !same(key.hash) || (key.range !== undefined && !same(key.range));
}

/** Units of one call per table, collected while it runs. */
export class Consumption {
  private readonly tables = new Map<string, { total: number; table: number; indexes: Map<string, number> }>();

  add(tableName: string, units: number, indexName?: string) {
    let entry = this.tables.get(tableName);
    if (!entry) {
      entry = { total: 0, table: 0, indexes: new Map() };
      this.tables.set(tableName, entry);
    }
    entry.total += units;
    if (indexName) entry.indexes.set(indexName, (entry.indexes.get(indexName) ?? 0) + units);
    else entry.table += units;
  }

  addChange(table: Table, units: { table: number; indexes: Map<string, number> }) {
    this.add(table.name, units.table);
    for (const [index, n] of units.indexes) this.add(table.name, n, index);
  }

  /** Units per table (the local cloud's counters). */
  byTable(): Map<string, number> {
    return new Map([...this.tables].map(([name, e]) => [name, e.total]));
  }

  /**
   * `ConsumedCapacity` as the response carries it for `ReturnConsumedCapacity`
   * (`TOTAL`: per table; `INDEXES`: with the table's and each index's share);
   * one entry for single-table calls, a list for the batch and transaction
   * calls (`list`). Undefined for `NONE` or absent.
   */
  report(input: Input, list: boolean): Record<string, unknown> {
    const mode = input.ReturnConsumedCapacity;
    if (mode !== 'TOTAL' && mode !== 'INDEXES') return {};
    const entries = [...this.tables].map(([name, e]) => ({
      TableName: name,
      CapacityUnits: e.total,
      ...(mode === 'INDEXES'
        ? {
            Table: { CapacityUnits: e.table },
            ...(e.indexes.size > 0
              ? {
                  GlobalSecondaryIndexes: Object.fromEntries(
                    [...e.indexes].map(([index, units]) => [index, { CapacityUnits: units }]),
                  ),
                }
              : {}),
          }
        : {}),
    }));
    if (list) return { ConsumedCapacity: entries };
    return entries[0] ? { ConsumedCapacity: entries[0] } : {};
  }
}
