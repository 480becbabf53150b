import { randomUUID } from 'node:crypto';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConcurrencyError } from './errors';
import { type DomainEvent, type Fold, foldEvents } from './events';

/**
 * Where the event items live: the few calls `AggregateStore` makes, so that
 * the same aggregate logic (versions, snapshots, upcasting) runs on DynamoDB
 * in the functions and on `InMemoryEventStore` in the unit tests. Both keep
 * the same semantics, held by one contract test (test/support/event-store-contract.ts):
 * an item's key is written once, `write` is all or nothing, and a lost race
 * raises `ConcurrencyError` naming the aggregates that lost it. The
 * DynamoDB one is dynamodb-event-store.ts.
 */
export interface EventStore {
  /** The newest item of the aggregate (a consistent read), if it has any. */
  newest(tableName: string, aggregateId: string): Promise<EventItem | undefined>;
  /** The aggregate's item at `version` (a consistent read), if there is one. */
  at(tableName: string, aggregateId: string, version: number): Promise<EventItem | undefined>;
  /** Every item of the aggregate, oldest first, a page at a time (consistent reads). */
  pages(tableName: string, aggregateId: string): AsyncIterable<readonly EventItem[]>;
  /** Writes several aggregates' appends all or nothing (see `appendAtomically`). */
  write(appends: readonly PendingAppend[]): Promise<void>;
}

/**
 * The event store: one DynamoDB table per service, partition key the aggregate
 * id, sort key the version. Appends are conditional on the version being new
 * (optimistic concurrency); the table's stream is the outbox.
 *
 * Every event item also carries the folded state after it (tagged with the
 * fold's version), so loading an aggregate is one `Query` for its newest item
 * however long it has lived. Events stay immutable; a change to `evolve` bumps
 * `foldVersion` and old snapshots are then ignored and the events refolded.
 */
export const KEY = { partition: 'aggregateId', sort: 'version' } as const;

export interface Loaded<State> {
  readonly state: State;
  /** 0 for an aggregate with no events yet. */
  readonly version: number;
}

export interface AppendMeta {
  readonly now: Date;
  readonly correlationId?: string;
  /** The fingerprint of the request that creates the aggregate, kept on its first item (see `idempotentCreation`). */
  readonly requestHash?: string;
}

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One aggregate's pending append, to be written alone or in a transaction with others. */
export interface PendingAppend {
  readonly aggregateId: string;
  readonly items: readonly TransactItem[];
}

/** One stored event, as the table holds it. */
export interface EventItem {
  [indexAttribute: string]: unknown;
  aggregateId: string;
  version: number;
  aggregateType: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  eventId: string;
  occurredAt: string;
  correlationId?: string;
  state?: unknown;
  foldVersion?: number;
}

/**
 * Attributes an event item carries besides the event, for a sparse index of
 * the table (keys that only some events have). Not part of the event.
 */
export type IndexAttributes<State, E> = (event: E, state: State) => Record<string, string> | undefined;

/**
 * The `type` of the item that a refused creation leaves at its aggregate's
 * first version (see `idempotentCreation`). It is not an event: the
 * aggregate was never created, and loading it finds nothing. It holds the
 * first version, so a repeat of the request cannot create the aggregate
 * later, and it carries the answer that repeat is given.
 */
export const CREATION_REFUSED = 'CreationRefused';

/** A refused creation's answer, and the fingerprint of the request that was refused. */
export interface RememberedRefusal {
  readonly requestHash: string;
  /** The answer as it was sent (JSON), to be sent again to a repeat. */
  readonly answer: string;
}

export class AggregateStore<State, E extends DomainEvent> {
  constructor(
    private readonly store: EventStore,
    readonly tableName: string,
    readonly aggregateType: string,
    private readonly fold: Fold<State, E>,
    private readonly indexAttributes?: IndexAttributes<State, E>,
  ) {}

  /** Another kind of aggregate in the same table and store (e.g. a uniqueness claim beside the aggregates it guards). */
  sibling<S, F extends DomainEvent>(aggregateType: string, fold: Fold<S, F>): AggregateStore<S, F> {
    return new AggregateStore(this.store, this.tableName, aggregateType, fold);
  }

  /** Writes several appends (of this store's aggregates or its siblings') all or nothing. */
  write(appends: readonly PendingAppend[]): Promise<void> {
    return this.store.write(appends);
  }

  async load(aggregateId: string): Promise<Loaded<State>> {
    const item = await this.store.newest(this.tableName, aggregateId);
    // A refused creation's item holds version 1, so that a creating append conflicts with it.
    if (!item || item.type === CREATION_REFUSED) return { state: this.fold.initial, version: 0 };
    const snapshot = this.snapshot(item);
    if (snapshot !== undefined) return { state: snapshot, version: item.version };
    return this.refold(aggregateId);
  }

  /** The state an item carries, if it was folded by this fold's version. */
  private snapshot(item: EventItem): State | undefined {
    if (item.foldVersion !== this.fold.foldVersion || item.state === undefined) return undefined;
    const state = item.state as State;
    return this.fold.upcastState ? this.fold.upcastState(state) : state;
  }

  /**
   * The aggregate as its first append left it, and the fingerprint of the
   * request that created it: what a repeat of that request is answered from.
   * Only for aggregates created by a single event.
   */
  async first(aggregateId: string): Promise<{ state: State; event: E; requestHash?: string } | undefined> {
    const item = await this.store.at(this.tableName, aggregateId, 1);
    if (!item || item.type === CREATION_REFUSED) return undefined;
    const event = this.upcast(item);
    const state = this.snapshot(item) ?? foldEvents(this.fold, this.fold.initial, [event]);
    return {
      state,
      event,
      ...(typeof item.requestHash === 'string' ? { requestHash: item.requestHash } : {}),
    };
  }

  /**
   * Remembers that the creation of `aggregateId` was refused, with its
   * answer, at the aggregate's first version: one conditional `PutItem`. A
   * creation that made it first wins (`ConcurrencyError`), and from then on
   * no creation can (see `CREATION_REFUSED`).
   */
  async refuse(aggregateId: string, refusal: RememberedRefusal, now: Date): Promise<void> {
    const item: EventItem = {
      aggregateId,
      version: 1,
      aggregateType: this.aggregateType,
      type: CREATION_REFUSED,
      schemaVersion: 1,
      data: { answer: refusal.answer },
      eventId: randomUUID(),
      occurredAt: now.toISOString(),
      requestHash: refusal.requestHash,
    };
    await this.store.write([{ aggregateId, items: [firstPut(this.tableName, item)] }]);
  }

  /** The refusal remembered for `aggregateId` (see `refuse`), if its creation was refused. */
  async refusal(aggregateId: string): Promise<RememberedRefusal | undefined> {
    const item = await this.store.at(this.tableName, aggregateId, 1);
    if (item?.type !== CREATION_REFUSED) return undefined;
    return { requestHash: String(item.requestHash), answer: (item.data as { answer: string }).answer };
  }

  /** Folds every event from the first: the path taken after `evolve` changed. */
  private async refold(aggregateId: string): Promise<Loaded<State>> {
    let state = this.fold.initial;
    let version = 0;
    for await (const page of this.store.pages(this.tableName, aggregateId)) {
      state = foldEvents(
        this.fold,
        state,
        page.map((i) => this.upcast(i)),
      );
      version = page.at(-1)?.version ?? version;
    }
    return { state, version };
  }

  private upcast(item: EventItem): E {
    const event: DomainEvent = { type: item.type, schemaVersion: item.schemaVersion, data: item.data };
    return this.fold.upcast ? this.fold.upcast(event) : (event as E);
  }

  /**
   * The writes that append `events` after `expectedVersion`. Each event gets
   * the next version, conditional on that version being free; the last one
   * carries the state after all of them.
   */
  pending(
    aggregateId: string,
    expectedVersion: number,
    events: readonly E[],
    from: State,
    meta: AppendMeta,
  ): PendingAppend {
    const state = foldEvents(this.fold, from, events);
    const items = events.map((event, i): TransactItem => {
      const item: EventItem = {
        aggregateId,
        version: expectedVersion + i + 1,
        aggregateType: this.aggregateType,
        type: event.type,
        schemaVersion: event.schemaVersion,
        data: event.data,
        eventId: randomUUID(),
        occurredAt: meta.now.toISOString(),
        ...(meta.correlationId ? { correlationId: meta.correlationId } : {}),
        ...(i === events.length - 1 ? { state, foldVersion: this.fold.foldVersion } : {}),
        ...(expectedVersion + i === 0 && meta.requestHash ? { requestHash: meta.requestHash } : {}),
        ...this.indexAttributes?.(event, state),
      };
      return firstPut(this.tableName, item);
    });
    return { aggregateId, items };
  }

  /**
   * A transaction item that holds only while this aggregate is still at
   * `version`: the guard for a decision that read another aggregate, so that
   * the decision and a concurrent change of what it read cannot both land.
   */
  unchanged(aggregateId: string, version: number): PendingAppend {
    return {
      aggregateId,
      items: [
        {
          ConditionCheck: {
            TableName: this.tableName,
            Key: { [KEY.partition]: aggregateId, [KEY.sort]: version + 1 },
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': KEY.partition },
          },
        },
      ],
    };
  }

  /** Appends to this one aggregate; a single event is one conditional `PutItem`. */
  async append(
    aggregateId: string,
    expectedVersion: number,
    events: readonly E[],
    from: State,
    meta: AppendMeta,
  ): Promise<State> {
    await this.store.write([this.pending(aggregateId, expectedVersion, events, from, meta)]);
    return foldEvents(this.fold, from, events);
  }
}

/** The write of an item whose key must be new: how every item of the store is written. */
const firstPut = (tableName: string, item: EventItem): TransactItem => ({
  Put: {
    TableName: tableName,
    Item: item as unknown as Record<string, unknown>,
    ConditionExpression: 'attribute_not_exists(#id)',
    ExpressionAttributeNames: { '#id': KEY.partition },
  },
});

/** The most items one `TransactWriteItems` takes. */
export const TRANSACTION_ITEM_LIMIT = 100;

/**
 * The aggregates whose items the cancellation names (any reason but `None`, or only `code`); when
 * none is named, every aggregate (`orAll`) or none.
 */
export function conflicted(
  appends: readonly PendingAppend[],
  reasons: readonly { Code?: string }[],
  code?: string,
  orAll = true,
): string[] {
  const ids: string[] = [];
  let index = 0;
  for (const append of appends) {
    const mine = reasons.slice(index, index + append.items.length);
    if (mine.some((r) => r.Code && r.Code !== 'None' && (code === undefined || r.Code === code)))
      ids.push(append.aggregateId);
    index += append.items.length;
  }
  return ids.length > 0 || !orAll ? ids : appends.map((a) => a.aggregateId);
}

/**
 * Runs `attempt` again after a `ConcurrencyError`, with full-jitter backoff,
 * passing it its number (1 for the first). Only for commands that reload and
 * re-decide on every attempt (the first may start from what it was handed).
 */
export async function retryOnConflict<T>(attempt: (n: number) => Promise<T>, maxAttempts = 25): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || n >= maxAttempts) throw error;
      const ceiling = Math.min(200, 2 * 2 ** n);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
    }
  }
}
