import { type AttributeValue, compareKeyValues, type Item, keyString } from './values';

/** A key schema: the partition (hash) key's attribute name and the sort (range) key's, if any. */
export interface KeyNames {
  readonly hash: string;
  readonly range?: string;
}

/** A sort-key condition of a Query, on the collection's range key. */
export interface SortCondition {
  readonly op: '=' | '<' | '<=' | '>' | '>=' | 'BETWEEN' | 'begins_with';
  readonly values: readonly AttributeValue[];
}

/**
 * An item as a collection keeps it: the attributes it is ordered by, as
 * values, and the whole item as its JSON text. A flash sale writes hundreds
 * of thousands of event items that are read once or never again; as objects
 * of attribute values each held about 3.5 KB of heap, as text about 0.8 KB.
 * The text is shared by the table, its indexes and its stream. While an
 * item is among its collection's recently used (`RECENT_ITEMS`) it keeps its
 * objects too, so the working set is not parsed on every read. An item read
 * or written is never changed in place: callers share it, as they share
 * every stored item's objects.
 */
export interface StoredItem {
  readonly keys: Item;
  readonly text: string;
  item?: Item;
}

/** The item a stored entry holds. */
export const unpack = (stored: StoredItem): Item => stored.item ?? (JSON.parse(stored.text) as Item);

/**
 * How many of a collection's entries keep their objects, most recently
 * written or read first in, first out: a saga's order and customer, a
 * product's shards, the reservations a sweep reads.
 */
export const RECENT_ITEMS = 2048;

/**
 * Items grouped by partition key and kept in sort-key order within each
 * partition, the way DynamoDB lays out a table or a global secondary index
 * ("Partitions and data distribution", Developer Guide): a Query reads one
 * partition in order, from a point given by a sort-key condition or an
 * `ExclusiveStartKey`. In a global secondary index, items with the same
 * index keys are ordered further by the table's keys, so every entry has one
 * place and a page can resume after it.
 */
export class Collection {
  /** Partition key (as `keyString`) to its items, in order. */
  private readonly partitions = new Map<string, StoredItem[]>();
  /** Orders two items' keys (a stored entry's `keys`, or a request's key). */
  private readonly compare: (a: Item, b: Item) => number;
  /** The attributes an entry keeps as values: this collection's key and, in an index, the table's. */
  private readonly keyNames: readonly string[];
  /** The entries that keep their objects (`RECENT_ITEMS`), a ring whose oldest slot is `nextRecent`. */
  private readonly recent: (StoredItem | undefined)[] = [];
  private nextRecent = 0;

  constructor(
    readonly key: KeyNames,
    /** The table's own keys, when this collection is an index (the tie-break between equal index keys). */
    readonly tableKey?: KeyNames,
  ) {
    this.keyNames = [...new Set([key.hash, key.range, tableKey?.hash, tableKey?.range])].filter(
      (name): name is string => name !== undefined,
    );
    const range = key.range;
    const tieBreak = tableKey ? tableOrder(tableKey) : undefined;
    if (range && tieBreak) {
      this.compare = (a, b) => compareKeyValues(a[range]!, b[range]!) || tieBreak(a, b);
    } else if (range) {
      this.compare = (a, b) => compareKeyValues(a[range]!, b[range]!);
    } else if (tieBreak) {
      this.compare = tieBreak;
    } else {
      this.compare = () => 0;
    }
  }

  /** Whether the item belongs here: a sparse index holds only items with its key attributes. */
  holds(item: Item): boolean {
    return item[this.key.hash] !== undefined && (!this.key.range || item[this.key.range] !== undefined);
  }

  partitionOf(item: Item): string {
    return keyString(item[this.key.hash]!);
  }

  /** The stored item with the keys of `key` (a table's own lookup), or undefined. */
  get(key: Item): Item | undefined {
    const items = this.partitions.get(keyString(key[this.key.hash]!));
    if (!items) return undefined;
    if (!this.key.range) return items[0] && this.read(items[0]);
    const at = this.search(items, key);
    return at >= 0 ? this.read(items[at]!) : undefined;
  }

  /** A stored entry's item, from its objects if it keeps them, else parsed and kept among the recent. */
  private read(stored: StoredItem): Item {
    return stored.item ?? this.keepRecent(stored, JSON.parse(stored.text) as Item);
  }

  private keepRecent(stored: StoredItem, item: Item): Item {
    const oldest = this.recent[this.nextRecent];
    if (oldest) oldest.item = undefined;
    this.recent[this.nextRecent] = stored;
    this.nextRecent = (this.nextRecent + 1) % RECENT_ITEMS;
    stored.item = item;
    return item;
  }

  /**
   * Stores `item` (in place of any entry with its keys), as `text` when
   * given: the JSON text of the same item, already made for the table.
   */
  insert(item: Item, text = JSON.stringify(item)): StoredItem {
    const keys: Item = {};
    for (const name of this.keyNames) if (item[name] !== undefined) keys[name] = item[name]!;
    const stored: StoredItem = { keys, text };
    this.keepRecent(stored, item);
    const partition = this.partitionOf(item);
    const items = this.partitions.get(partition);
    if (!items) {
      this.partitions.set(partition, [stored]);
      return stored;
    }
    const at = this.search(items, keys);
    if (at >= 0) items[at] = stored;
    else items.splice(-at - 1, 0, stored);
    return stored;
  }

  /** Removes the entry stored for `item`'s keys (as they were when it was inserted), and returns it. */
  remove(item: Item): StoredItem | undefined {
    const partition = this.partitionOf(item);
    const items = this.partitions.get(partition);
    if (!items) return undefined;
    const at = this.search(items, item);
    if (at < 0) return undefined;
    const [removed] = items.splice(at, 1);
    if (items.length === 0) this.partitions.delete(partition);
    return removed;
  }

  /**
   * A partition's items that meet `sort`, in order (`forward`) or reversed,
   * starting after `exclusiveStart` when given. Lazy: a Query stops at its
   * limit or its page size without touching the rest.
   */
  *query(
    hashValue: AttributeValue,
    sort: SortCondition | undefined,
    forward: boolean,
    exclusiveStart?: Item,
  ): Generator<Item> {
    const items = this.partitions.get(keyString(hashValue));
    if (!items) return;
    let [from, to] = sort && this.key.range ? this.bounds(items, this.key.range, sort) : [0, items.length];
    if (exclusiveStart) {
      if (forward) from = Math.max(from, this.firstAfter(items, exclusiveStart));
      else to = Math.min(to, this.firstAfter(items, exclusiveStart, true));
    }
    if (forward) for (let i = from; i < to; i++) yield this.read(items[i]!);
    else for (let i = to - 1; i >= from; i--) yield this.read(items[i]!);
  }

  /** Every item, partition by partition (a Scan), starting after `exclusiveStart` when given. */
  *scan(exclusiveStart?: Item): Generator<Item> {
    let started = exclusiveStart === undefined;
    const startPartition = exclusiveStart ? keyString(exclusiveStart[this.key.hash]!) : undefined;
    for (const [partition, items] of this.partitions) {
      let from = 0;
      if (!started) {
        if (partition !== startPartition) continue;
        started = true;
        from = this.firstAfter(items, exclusiveStart!);
      }
      for (let i = from; i < items.length; i++) yield this.read(items[i]!);
    }
  }

  get size(): number {
    let n = 0;
    for (const items of this.partitions.values()) n += items.length;
    return n;
  }

  /** Binary search: the index of the entry ordered equal to `probe`, or -(insertion point) - 1. */
  private search(items: readonly StoredItem[], probe: Item): number {
    let low = 0;
    let high = items.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const c = this.compare(items[mid]!.keys, probe);
      if (c < 0) low = mid + 1;
      else if (c > 0) high = mid - 1;
      else return mid;
    }
    return -low - 1;
  }

  /** The first index whose entry orders after `key` (or, `orEqual`, at or after it). */
  private firstAfter(items: readonly StoredItem[], key: Item, orEqual = false): number {
    let low = 0;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const c = this.compare(items[mid]!.keys, key);
      if (c < 0 || (c === 0 && !orEqual)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** The index range [from, to) of a partition whose sort key meets `sort`. */
  private bounds(items: readonly StoredItem[], range: string, sort: SortCondition): [number, number] {
    const first = (test: (c: number) => boolean) => {
      let low = 0;
      let high = items.length;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (test(compareKeyValues(items[mid]!.keys[range]!, sort.values[0]!))) high = mid;
        else low = mid + 1;
      }
      return low;
    };
    const firstAtLeast = () => first((c) => c >= 0);
    const firstAbove = () => first((c) => c > 0);
    switch (sort.op) {
      case '=':
        return [firstAtLeast(), firstAbove()];
      case '<':
        return [0, firstAtLeast()];
      case '<=':
        return [0, firstAbove()];
      case '>':
        return [firstAbove(), items.length];
      case '>=':
        return [firstAtLeast(), items.length];
      case 'BETWEEN': {
        const upper = sort.values[1]!;
        let low = 0;
        let high = items.length;
        while (low < high) {
          const mid = (low + high) >>> 1;
          if (compareKeyValues(items[mid]!.keys[range]!, upper) > 0) high = mid;
          else low = mid + 1;
        }
        return [firstAtLeast(), low];
      }
      case 'begins_with': {
        // Values with a prefix are contiguous in key order, from the prefix itself on.
        const from = firstAtLeast();
        let low = from;
        let high = items.length;
        while (low < high) {
          const mid = (low + high) >>> 1;
          if (beginsWith(items[mid]!.keys[range]!, sort.values[0]!)) low = mid + 1;
          else high = mid;
        }
        return [from, low];
      }
    }
  }
}

function tableOrder(key: KeyNames): (a: Item, b: Item) => number {
  const { hash, range } = key;
  return (a, b) => {
    const c = compareKeyValues(a[hash]!, b[hash]!);
    if (c !== 0 || !range) return c;
    return compareKeyValues(a[range]!, b[range]!);
  };
}

function beginsWith(value: AttributeValue, prefix: AttributeValue): boolean {
  if (value.S !== undefined && prefix.S !== undefined)
    return (value.S as string).startsWith(prefix.S as string);
  if (value.B !== undefined && prefix.B !== undefined) {
    const v = Buffer.from(value.B as string, 'base64');
    const p = Buffer.from(prefix.B as string, 'base64');
    return v.length >= p.length && v.subarray(0, p.length).equals(p);
  }
  return false;
}
