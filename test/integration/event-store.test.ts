// The event store against the local DynamoDB engine (its own instance, not the
// suite's local cloud): optimistic concurrency, all-or-nothing appends of
// several aggregates, snapshot loads, refolds and retries.
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type LocalDynamoDb, startDynamoDb } from '@commerce/local-cloud';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { DynamoDbDocuments } from '../../functions/shared/dynamodb-documents';
import { appendAtomically, DynamoDbEventStore } from '../../functions/shared/dynamodb-event-store';
import { ConcurrencyError } from '../../functions/shared/errors';
import { AggregateStore, type AppendMeta, KEY, retryOnConflict } from '../../functions/shared/event-store';
import type { DomainEvent, Fold } from '../../functions/shared/events';
import { eventStoreContract } from '../support/event-store-contract';

// The engine starts in this process at once; the timeout covers a busy machine.
const START_TIMEOUT_MS = 30_000;
const TABLE = 'events';

type Incremented = DomainEvent<'Incremented', { by: number; pad?: string }>;

/** A counter aggregate: the smallest fold whose state shows every event was applied once. */
const counter = (foldVersion: number): Fold<number, Incremented> => ({
  foldVersion,
  initial: 0,
  evolve: (n, e) => n + e.data.by,
});
const inc = (by = 1, pad?: string): Incremented => ({
  type: 'Incremented',
  schemaVersion: 1,
  data: { by, ...(pad ? { pad } : {}) },
});

const meta = (): AppendMeta => ({ now: new Date(), correlationId: 'corr-1' });
let sequence = 0;
const newAggregateId = (label: string) => `${label}-${++sequence}-${Date.now()}`;

let ddb: LocalDynamoDb;
let base: DynamoDBClient;
let documents: DynamoDBDocumentClient;
/** The functions' client, as the store is given it. */
let client: DynamoDbDocuments;
/** Every operation sent through `client`, in order. */
const sent: string[] = [];

beforeAll(async () => {
  ddb = await startDynamoDb();
  base = new DynamoDBClient({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  client = new DynamoDbDocuments({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    retryStrategy: new StandardRetryStrategy(3),
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    onCall: (operation) => sent.push(operation),
  });
  documents = DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  // The event-store key schema, as the service constructs define it.
  await base.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: KEY.partition, AttributeType: 'S' },
        { AttributeName: KEY.sort, AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: KEY.partition, KeyType: 'HASH' },
        { AttributeName: KEY.sort, KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
    }),
  );
}, START_TIMEOUT_MS);

afterAll(async () => {
  base?.destroy();
  client?.destroy();
  await ddb?.stop();
});

/** Every stored item of an aggregate, oldest first (consistent read). */
async function itemsOf(aggregateId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': KEY.partition },
        ExpressionAttributeValues: { ':id': aggregateId },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Runs `fn` and returns the operations it sent. */
async function recording<T>(fn: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const from = sent.length;
  const result = await fn();
  return { result, commands: sent.slice(from) };
}

function rejectionsOf(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
}

describe('AggregateStore on the local DynamoDB engine', () => {
  const store = () => new AggregateStore(new DynamoDbEventStore(client), TABLE, 'Counter', counter(1));

  it('loads an aggregate with no events as the initial state at version 0', async () => {
    expect(await store().load(newAggregateId('empty'))).toEqual({ state: 0, version: 0 });
  });

  it('appends events with consecutive versions, the last one carrying the state and fold version', async () => {
    const id = newAggregateId('append');
    const s = store();
    expect(await s.append(id, 0, [inc(2)], 0, meta())).toBe(2);
    expect(await s.append(id, 1, [inc(3), inc(4)], 2, meta())).toBe(9);
    const items = await itemsOf(id);
    expect(items.map((i) => i[KEY.sort])).toEqual([1, 2, 3]);
    expect(items.map((i) => i.aggregateType)).toEqual(['Counter', 'Counter', 'Counter']);
    expect(items.map((i) => i.correlationId)).toEqual(['corr-1', 'corr-1', 'corr-1']);
    expect(new Set(items.map((i) => i.eventId)).size).toBe(3);
    // Each append's last event carries the folded state; an event inside a batch does not.
    expect(items.map((i) => [i.state, i.foldVersion])).toEqual([
      [2, 1],
      [undefined, undefined],
      [9, 1],
    ]);
    expect(await s.load(id)).toEqual({ state: 9, version: 3 });
  });

  it.each([
    ['one event (a conditional put)', 1],
    ['two events (a transaction)', 2],
  ])('20 concurrent appends of %s at one expected version: exactly one wins', async (_how, count) => {
    const id = newAggregateId('race');
    const s = store();
    await s.append(id, 0, [inc(100)], 0, meta());
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) =>
        s.append(
          id,
          1,
          Array.from({ length: count }, () => inc(n + 1)),
          100,
          meta(),
        ),
      ),
    );
    const winners = results.filter((r) => r.status === 'fulfilled');
    expect(winners).toHaveLength(1);
    const losers = rejectionsOf(results);
    expect(losers).toHaveLength(19);
    for (const error of losers) {
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect((error as ConcurrencyError).aggregateIds).toEqual([id]);
    }
    // Only the winner's events are stored, and the loaded state is the winner's.
    const winnerState = (winners[0] as PromiseFulfilledResult<number>).value;
    const items = await itemsOf(id);
    expect(items.map((i) => i[KEY.sort])).toEqual(Array.from({ length: count + 1 }, (_, i) => i + 1));
    expect(await s.load(id)).toEqual({ state: winnerState, version: 1 + count });
    const winnerBy = (winnerState - 100) / count;
    expect(items.slice(1).map((i) => (i.data as { by: number }).by)).toEqual(Array(count).fill(winnerBy));
  });

  it('a multi-aggregate append is all or nothing: one conflicting aggregate and none is written', async () => {
    const s = store();
    const [a, b, c] = [newAggregateId('a'), newAggregateId('b'), newAggregateId('c')];
    await s.append(b, 0, [inc(1)], 0, meta());
    // b is at version 1; this append still expects 0.
    const attempt = appendAtomically(client, [
      s.pending(a, 0, [inc(10)], 0, meta()),
      s.pending(b, 0, [inc(10)], 0, meta()),
      s.pending(c, 0, [inc(10), inc(10)], 0, meta()),
    ]);
    await expect(attempt).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(attempt).rejects.toMatchObject({ aggregateIds: [b] });
    expect(await itemsOf(a)).toEqual([]);
    expect(await itemsOf(c)).toEqual([]);
    expect((await itemsOf(b)).map((i) => i[KEY.sort])).toEqual([1]);
    expect(await s.load(b)).toEqual({ state: 1, version: 1 });

    // The same append at the right versions writes all three together.
    await appendAtomically(client, [
      s.pending(a, 0, [inc(10)], 0, meta()),
      s.pending(b, 1, [inc(10)], 1, meta()),
      s.pending(c, 0, [inc(10), inc(10)], 0, meta()),
    ]);
    expect(await s.load(a)).toEqual({ state: 10, version: 1 });
    expect(await s.load(b)).toEqual({ state: 11, version: 2 });
    expect(await s.load(c)).toEqual({ state: 20, version: 2 });
  });

  it('appending nothing writes nothing', async () => {
    const { commands } = await recording(() => appendAtomically(client, []));
    expect(commands).toEqual([]);
  });

  it('loads the state carried by the newest item with ONE query', async () => {
    const id = newAggregateId('snapshot');
    const s = store();
    let version = 0;
    let state = 0;
    for (let n = 1; n <= 5; n++) {
      state = await s.append(id, version, [inc(n)], state, meta());
      version++;
    }
    const { result, commands } = await recording(() => s.load(id));
    expect(result).toEqual({ state: 15, version: 5 });
    expect(commands).toEqual(['Query']);

    // The state comes from the newest item, not from folding the events:
    // an item whose snapshot disagrees with its events is believed.
    await documents.send(
      new PutCommand({
        TableName: TABLE,
        Item: {
          aggregateId: id,
          version: 6,
          aggregateType: 'Counter',
          type: 'Incremented',
          schemaVersion: 1,
          data: { by: 1 },
          eventId: 'e6',
          occurredAt: new Date().toISOString(),
          state: 1_000,
          foldVersion: 1,
        },
      }),
    );
    const again = await recording(() => s.load(id));
    expect(again.result).toEqual({ state: 1_000, version: 6 });
    expect(again.commands).toEqual(['Query']);
  });

  it('ignores a snapshot made by another fold version and refolds the events', async () => {
    const id = newAggregateId('old-fold');
    // Items as an older fold (version 0) wrote them, with a snapshot that the current fold would not make.
    for (let v = 1; v <= 4; v++) {
      await documents.send(
        new PutCommand({
          TableName: TABLE,
          Item: {
            aggregateId: id,
            version: v,
            aggregateType: 'Counter',
            type: 'Incremented',
            schemaVersion: 1,
            data: { by: v },
            eventId: `e${v}`,
            occurredAt: new Date().toISOString(),
            state: -999,
            foldVersion: 0,
          },
        }),
      );
    }
    const s = store();
    const { result, commands } = await recording(() => s.load(id));
    expect(result).toEqual({ state: 1 + 2 + 3 + 4, version: 4 });
    expect(commands).toEqual(['Query', 'Query']);

    // The next append from the refolded state stores a current snapshot, which is then read alone.
    expect(await s.append(id, result.version, [inc(5)], result.state, meta())).toBe(15);
    const next = await recording(() => s.load(id));
    expect(next.result).toEqual({ state: 15, version: 5 });
    expect(next.commands).toEqual(['Query']);
  });

  it('a fold with a newer version refolds what the older fold stored', async () => {
    const id = newAggregateId('new-fold');
    const v1 = store();
    await v1.append(id, 0, [inc(1), inc(2)], 0, meta());
    // foldVersion 2 doubles every increment: its refold must not read v1's snapshot.
    const doubled: Fold<number, Incremented> = {
      foldVersion: 2,
      initial: 0,
      evolve: (n, e) => n + 2 * e.data.by,
    };
    const v2 = new AggregateStore(new DynamoDbEventStore(client), TABLE, 'Counter', doubled);
    expect(await v2.load(id)).toEqual({ state: 6, version: 2 });
    expect(await v1.load(id)).toEqual({ state: 3, version: 2 });
  });

  it('refolds an aggregate whose events fill more than one query page', async () => {
    const id = newAggregateId('long');
    const s = store();
    // ~40 KB per event: 40 events are well over DynamoDB's 1 MB query page.
    const pad = 'x'.repeat(40_000);
    const count = 40;
    let state = 0;
    for (let v = 0; v < count; v++) state = await s.append(id, v, [inc(v + 1, pad)], state, meta());
    expect(state).toBe((count * (count + 1)) / 2);

    const newer = new AggregateStore(new DynamoDbEventStore(client), TABLE, 'Counter', counter(2));
    const { result, commands } = await recording(() => newer.load(id));
    expect(result).toEqual({ state: (count * (count + 1)) / 2, version: count });
    // One query for the newest item, then at least two pages of events.
    expect(commands.length).toBeGreaterThanOrEqual(3);
    expect(commands.every((c) => c === 'Query')).toBe(true);
  });

  it('retryOnConflict: 10 concurrent increments of one counter end at exactly 10', async () => {
    const id = newAggregateId('retry');
    const s = store();
    let attempts = 0;
    const increment = () =>
      retryOnConflict(async () => {
        attempts++;
        const { state, version } = await s.load(id);
        return s.append(id, version, [inc(1)], state, meta());
      });
    await Promise.all(Array.from({ length: 10 }, increment));
    expect(await s.load(id)).toEqual({ state: 10, version: 10 });
    const items = await itemsOf(id);
    expect(items.map((i) => i[KEY.sort])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(items.map((i) => i.state)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Some of them lost a race and tried again.
    expect(attempts).toBeGreaterThan(10);
  });

  it('retryOnConflict gives up after maxAttempts and rethrows anything but a conflict at once', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw new ConcurrencyError(['x']);
      }, 3),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    expect(calls).toBe(3);

    calls = 0;
    const boom = new Error('boom');
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(calls).toBe(1);
  });
});

eventStoreContract('the local DynamoDB engine', () => new DynamoDbEventStore(client), TABLE);
