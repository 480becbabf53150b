/**
 * The event store's contract, run against both implementations of
 * `EventStore`: `DynamoDbEventStore` on the local DynamoDB engine in the
 * integration project (test/integration/event-store.test.ts) and
 * `InMemoryEventStore` in the unit project
 * (test/unit/in-memory-event-store.test.ts). What the unit tests of use
 * cases and saga steps rely on of the in-memory store is what holds here.
 */
import { ConcurrencyError } from '../../functions/shared/errors';
import { AggregateStore, type AppendMeta, type EventStore } from '../../functions/shared/event-store';
import type { DomainEvent, Fold } from '../../functions/shared/events';

type Incremented = DomainEvent<'Incremented', { by: number; note?: string }>;

/** A counter: the smallest fold whose state shows every event was applied once. */
const counter = (foldVersion: number, times = 1): Fold<number, Incremented> => ({
  foldVersion,
  initial: 0,
  evolve: (n, e) => n + times * e.data.by,
});
const inc = (by = 1, note?: string): Incremented => ({
  type: 'Incremented',
  schemaVersion: 1,
  data: { by, ...(note === undefined ? {} : { note }) },
});
const meta: AppendMeta = { now: new Date('2026-01-01T00:00:00.000Z'), correlationId: 'corr-1' };

let sequence = 0;
const newId = (label: string) => `contract-${label}-${++sequence}-${Date.now()}`;

async function rejectionOf(attempt: Promise<unknown>): Promise<unknown> {
  try {
    await attempt;
  } catch (error) {
    return error;
  }
  throw new Error('expected the attempt to fail');
}

export function eventStoreContract(name: string, events: () => EventStore, tableName: string) {
  describe(`the event store contract: ${name}`, () => {
    const store = (fold = counter(1)) => new AggregateStore(events(), tableName, 'Counter', fold);

    it('loads an aggregate with no events as the initial state at version 0', async () => {
      expect(await store().load(newId('none'))).toEqual({ state: 0, version: 0 });
      expect(await store().first(newId('none'))).toBeUndefined();
    });

    it('loads what was appended, at the version of its last event', async () => {
      const id = newId('append');
      expect(await store().append(id, 0, [inc(2), inc(3)], 0, meta)).toBe(5);
      expect(await store().append(id, 2, [inc(4)], 5, meta)).toBe(9);
      expect(await store().load(id)).toEqual({ state: 9, version: 3 });
    });

    it('keeps a refused creation at the first version: nothing to load, and no creation after it', async () => {
      const id = newId('refused');
      const refusal = { requestHash: 'hash-1', answer: '{"statusCode":404}' };
      await store().refuse(id, refusal, meta.now);
      expect(await store().refusal(id)).toEqual(refusal);
      expect(await store().load(id)).toEqual({ state: 0, version: 0 });
      expect(await store().first(id)).toBeUndefined();
      const lost = await rejectionOf(store().append(id, 0, [inc(1)], 0, meta));
      expect(lost).toBeInstanceOf(ConcurrencyError);
      expect((lost as ConcurrencyError).existing).toEqual([id]);
      expect(await store().load(id)).toEqual({ state: 0, version: 0 });
    });

    it('refuses no creation that was made: the refusal loses, and a made aggregate has none', async () => {
      const id = newId('made');
      await store().append(id, 0, [inc(2)], 0, { ...meta, requestHash: 'hash-1' });
      const lost = await rejectionOf(store().refuse(id, { requestHash: 'hash-2', answer: '{}' }, meta.now));
      expect(lost).toBeInstanceOf(ConcurrencyError);
      expect((lost as ConcurrencyError).existing).toEqual([id]);
      expect(await store().refusal(id)).toBeUndefined();
      expect(await store().load(id)).toEqual({ state: 2, version: 1 });
    });

    it('answers the first append and the fingerprint of the request that made it', async () => {
      const id = newId('first');
      await store().append(id, 0, [inc(7)], 0, { ...meta, requestHash: 'hash-1' });
      await store().append(id, 1, [inc(1)], 7, { ...meta, requestHash: 'hash-2' });
      expect(await store().first(id)).toEqual({ state: 7, event: inc(7), requestHash: 'hash-1' });
    });

    it('refuses an append at a version already taken, naming the aggregate, and keeps what was there', async () => {
      const id = newId('race');
      await store().append(id, 0, [inc(1)], 0, meta);
      const lost = await rejectionOf(store().append(id, 0, [inc(5)], 0, meta));
      expect(lost).toBeInstanceOf(ConcurrencyError);
      expect((lost as ConcurrencyError).aggregateIds).toEqual([id]);
      expect(await store().load(id)).toEqual({ state: 1, version: 1 });
    });

    it('lets exactly one of two concurrent appends at the same version land', async () => {
      const id = newId('concurrent');
      const results = await Promise.allSettled([
        store().append(id, 0, [inc(1)], 0, meta),
        store().append(id, 0, [inc(10)], 0, meta),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected?.reason).toBeInstanceOf(ConcurrencyError);
      expect((await store().load(id)).version).toBe(1);
    });

    it('writes several aggregates all or nothing, naming only those that lost', async () => {
      const [a, b] = [newId('a'), newId('b')];
      const s = store();
      await s.append(b, 0, [inc(1)], 0, meta);
      const lost = await rejectionOf(
        events().write([s.pending(a, 0, [inc(1)], 0, meta), s.pending(b, 0, [inc(1)], 0, meta)]),
      );
      expect(lost).toBeInstanceOf(ConcurrencyError);
      expect((lost as ConcurrencyError).aggregateIds).toEqual([b]);
      expect(await s.load(a)).toEqual({ state: 0, version: 0 });

      await events().write([s.pending(a, 0, [inc(2)], 0, meta), s.pending(b, 1, [inc(3)], 1, meta)]);
      expect(await s.load(a)).toEqual({ state: 2, version: 1 });
      expect(await s.load(b)).toEqual({ state: 4, version: 2 });
    });

    it('holds a write to a guard that the guarded aggregate is still at its version', async () => {
      const [guarded, written] = [newId('guarded'), newId('written')];
      const s = store();
      await s.append(guarded, 0, [inc(1)], 0, meta);
      await events().write([s.unchanged(guarded, 1), s.pending(written, 0, [inc(1)], 0, meta)]);
      expect((await s.load(written)).version).toBe(1);

      await s.append(guarded, 1, [inc(1)], 1, meta);
      const lost = await rejectionOf(
        events().write([s.unchanged(guarded, 1), s.pending(written, 1, [inc(1)], 1, meta)]),
      );
      expect((lost as ConcurrencyError).aggregateIds).toEqual([guarded]);
      expect((await s.load(written)).version).toBe(1);
    });

    it('writes nothing for no appends', async () => {
      await expect(events().write([])).resolves.toBeUndefined();
    });

    it('refuses a transaction of more than 100 items, writing none', async () => {
      const id = newId('large');
      const s = store();
      const appends = Array.from({ length: 101 }, (_, i) => s.pending(`${id}-${i}`, 0, [inc(1)], 0, meta));
      const lost = await rejectionOf(events().write(appends));
      expect(lost).not.toBeInstanceOf(ConcurrencyError);
      expect(await s.load(`${id}-0`)).toEqual({ state: 0, version: 0 });
    });

    it('refolds every event when the fold changed since the snapshot was written', async () => {
      const id = newId('refold');
      await store(counter(1)).append(id, 0, [inc(1), inc(2)], 0, meta);
      await store(counter(1)).append(id, 2, [inc(3)], 3, meta);
      expect(await store(counter(2, 10)).load(id)).toEqual({ state: 60, version: 3 });
    });

    it('hands back the data as it was appended, without undefined attributes', async () => {
      const id = newId('data');
      await store().append(id, 0, [inc(1, 'kept'), { ...inc(2), data: { by: 2, note: undefined } }], 0, meta);
      const pages: unknown[] = [];
      for await (const page of events().pages(tableName, id)) pages.push(...page.map((i) => i.data));
      expect(pages).toEqual([{ by: 1, note: 'kept' }, { by: 2 }]);
    });
  });
}
