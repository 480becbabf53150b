import type { StoredItem } from './collection';
import { DynamoDbError, validation } from './errors';
import { batchGetItem, batchWriteItem, deleteItem, getItem, putItem, updateItem } from './items';
import type { Journal, JournalEntry } from './journal';
import { query, scan } from './reads';
import { decodeIterator } from './stream';
import { type Table, type TableDefinition, Tables } from './tables';
import { transactGetItems, transactWriteItems } from './transactions';
import { type Item, valuesEqual } from './values';

/** One item changed by a write: its table, the item before and after (undefined: absent). */
export interface Change {
  readonly table: Table;
  readonly before: Item | undefined;
  readonly after: Item | undefined;
}

export type Input = Record<string, unknown>;
type Operation = (engine: DynamoDbEngine, input: Input) => unknown;

/** Read units a call consumed, per table (what the local cloud's counters bill). */
export type ReadListener = (operation: string, unitsByTable: ReadonlyMap<string, number>) => void;

/**
 * An in-process DynamoDB: the operations of the DynamoDB and DynamoDB
 * Streams JSON APIs that the platform, its tools and the local cloud use,
 * with DynamoDB's semantics as the API Reference states them (the
 * conformance suite, local/test/conformance, pins each one). Every call runs
 * to its end without yielding, so each is atomic and isolated: a
 * transaction never interleaves with another call, which is the
 * serializability DynamoDB promises and the reason this engine never has to
 * answer `TransactionConflictException` (the local cloud's fault injection
 * produces that answer where a test wants it).
 *
 * With a journal (`--data-dir`), every write is on disk before it is
 * acknowledged; without one, nothing touches the disk.
 */
export class DynamoDbEngine {
  readonly tables = new Tables();
  /** The next stream sequence number (engine-wide, so it only grows within every shard). */
  private sequence = 1n;
  private readonly writeListeners: ((tables: readonly string[]) => void)[] = [];
  private readonly readListeners: ReadListener[] = [];
  /** Idempotent TransactWriteItems: token to the request's fingerprint and when it was first seen. */
  readonly transactionTokens = new Map<string, { fingerprint: string; at: number }>();
  private replaying = false;
  /** Milliseconds spent in calls so far (each runs to its end on the caller's thread: its CPU time, near enough). */
  busyMs = 0;

  constructor(private readonly journal?: Journal) {
    if (journal) {
      this.replaying = true;
      try {
        for (const entry of journal.entries()) this.replay(entry);
      } finally {
        this.replaying = false;
      }
    }
  }

  /**
   * Runs one operation (`PutItem`, `GetRecords`, ...) and answers as
   * DynamoDB does, or throws a DynamoDbError to answer with.
   */
  handle(operation: string, input: Input): unknown {
    // Own properties only: `toString` or `constructor` is no operation.
    const run = Object.hasOwn(OPERATIONS, operation) ? OPERATIONS[operation] : undefined;
    if (!run) {
      throw new DynamoDbError(
        'UnknownOperationException',
        `The operation ${operation} is not supported by this engine`,
      );
    }
    if (!input || typeof input !== 'object' || Array.isArray(input)) {
      throw new DynamoDbError('SerializationException', 'Start of structure or map found where not expected');
    }
    const started = performance.now();
    try {
      return run(this, input);
    } finally {
      this.busyMs += performance.now() - started;
    }
  }

  /** Called after every write with the tables it changed (the stream pollers wake on it). */
  onWrite(listener: (tables: readonly string[]) => void) {
    this.writeListeners.push(listener);
  }

  /** Called after every read with the units it consumed, whatever the caller asked to be told. */
  onRead(listener: ReadListener) {
    this.readListeners.push(listener);
  }

  reportRead(operation: string, units: ReadonlyMap<string, number>) {
    for (const listener of this.readListeners) listener(operation, units);
  }

  /**
   * Applies the changes of one write as one: items and indexes, a stream
   * record for each item that changed, the journal (synchronously, before
   * the caller is answered).
   */
  commit(changes: readonly Change[], at = Date.now()) {
    const firstSequence = this.sequence;
    const written = new Set<string>();
    for (const change of changes) {
      const { table, before, after } = change;
      let removed: StoredItem | undefined;
      let stored: StoredItem | undefined;
      if (before) {
        removed = table.items.remove(before);
        for (const index of table.indexes.values())
          if (index.collection.holds(before)) index.collection.remove(before);
      }
      if (after) {
        stored = table.items.insert(after);
        for (const index of table.indexes.values())
          if (index.collection.holds(after)) index.collection.insert(after, stored.text);
      }
      written.add(table.name);
      if (table.stream && !sameItem(before, after)) table.stream.append(this.sequence++, at, removed, stored);
    }
    if (this.journal && !this.replaying) {
      this.journal.append({
        w: changes.map(({ table, before, after }) => [
          table.name,
          table.keyOf((after ?? before)!),
          after ?? null,
        ]),
        at,
        seq: firstSequence.toString(),
      });
    }
    if (written.size > 0) {
      const names = [...written];
      for (const listener of this.writeListeners) listener(names);
    }
  }

  createTable(definition: TableDefinition): Table {
    const table = this.tables.create({ ...definition, CreatedAt: definition.CreatedAt ?? Date.now() });
    if (this.journal && !this.replaying) this.journal.append({ create: table.definition });
    return table;
  }

  deleteTable(name: unknown): Table {
    const table = this.tables.delete(String(name));
    if (this.journal && !this.replaying) this.journal.append({ drop: table.name });
    return table;
  }

  private replay(entry: JournalEntry) {
    if ('create' in entry) {
      this.tables.create(entry.create);
    } else if ('drop' in entry) {
      this.tables.delete(entry.drop);
    } else {
      this.sequence = BigInt(entry.seq);
      this.commit(
        entry.w.map(([name, key, after]) => {
          const table = this.tables.get(name);
          return { table, before: table.items.get(key), after: after ?? undefined };
        }),
        entry.at,
      );
    }
  }
}

function sameItem(a: Item | undefined, b: Item | undefined): boolean {
  if (!a || !b) return a === b;
  return valuesEqual({ M: a }, { M: b });
}

const OPERATIONS: Record<string, Operation> = {
  CreateTable: (engine, input) => ({
    TableDescription: engine.createTable(input as unknown as TableDefinition).describe(),
  }),
  DeleteTable: (engine, input) => ({
    TableDescription: { ...engine.deleteTable(input.TableName).describe(), TableStatus: 'DELETING' },
  }),
  DescribeTable: (engine, input) => ({ Table: engine.tables.get(input.TableName).describe() }),
  ListTables: (engine, input) => {
    const limit = input.Limit === undefined ? 100 : Number(input.Limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw validation(
        "1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100",
      );
    }
    const start = input.ExclusiveStartTableName as string | undefined;
    const names = engine.tables.names().filter((n) => start === undefined || n > start);
    const page = names.slice(0, limit);
    return { TableNames: page, ...(names.length > limit ? { LastEvaluatedTableName: page.at(-1) } : {}) };
  },
  UpdateTable: (engine, input) => {
    // Capacity and billing settings have no effect locally; the table is described as it is.
    const table = engine.tables.get(input.TableName);
    if (input.GlobalSecondaryIndexUpdates || input.StreamSpecification || input.AttributeDefinitions) {
      throw validation(
        'UpdateTable: changing indexes or streams is not supported by this engine; recreate the table',
      );
    }
    return { TableDescription: table.describe() };
  },
  UpdateTimeToLive: (engine, input) => {
    const table = engine.tables.get(input.TableName);
    const spec = input.TimeToLiveSpecification as { Enabled: boolean; AttributeName: string } | undefined;
    if (!spec || typeof spec.AttributeName !== 'string')
      throw validation('TimeToLiveSpecification is required');
    table.ttlAttribute = spec.Enabled ? spec.AttributeName : undefined;
    return { TimeToLiveSpecification: spec };
  },
  DescribeTimeToLive: (engine, input) => {
    const table = engine.tables.get(input.TableName);
    return {
      TimeToLiveDescription: table.ttlAttribute
        ? { TimeToLiveStatus: 'ENABLED', AttributeName: table.ttlAttribute }
        : { TimeToLiveStatus: 'DISABLED' },
    };
  },
  PutItem: putItem,
  GetItem: getItem,
  UpdateItem: updateItem,
  DeleteItem: deleteItem,
  BatchGetItem: batchGetItem,
  BatchWriteItem: batchWriteItem,
  Query: query,
  Scan: scan,
  TransactWriteItems: transactWriteItems,
  TransactGetItems: transactGetItems,
  ListStreams: (engine, input) => {
    const name = input.TableName as string | undefined;
    const streams = [...engine.tables.all()]
      .filter((t) => t.stream && (name === undefined || t.name === name))
      .map((t) => ({ StreamArn: t.stream!.arn, TableName: t.name, StreamLabel: t.stream!.label }));
    return { Streams: streams };
  },
  DescribeStream: (engine, input) => {
    const table = engine.tables.byStream(input.StreamArn);
    const stream = table.stream!;
    return {
      StreamDescription: {
        StreamArn: stream.arn,
        StreamLabel: stream.label,
        StreamStatus: 'ENABLED',
        StreamViewType: stream.viewType,
        CreationRequestDateTime: table.createdAt / 1000,
        TableName: table.name,
        KeySchema: table.definition.KeySchema,
        Shards: [stream.description],
      },
    };
  },
  GetShardIterator: (engine, input) => {
    const stream = engine.tables.byStream(input.StreamArn).stream!;
    if (input.ShardId !== stream.shardId) {
      throw new DynamoDbError(
        'ResourceNotFoundException',
        `Requested resource not found: Shard does not exist`,
      );
    }
    return {
      ShardIterator: stream.iterator(
        String(input.ShardIteratorType),
        input.SequenceNumber as string | undefined,
      ),
    };
  },
  GetRecords: (engine, input) => {
    const position = decodeIterator(input.ShardIterator);
    const stream = engine.tables.byStream(position.streamArn).stream!;
    return stream.read(position, input.Limit === undefined ? undefined : Number(input.Limit));
  },
};
