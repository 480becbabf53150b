// The in-memory event store keeps the event store's contract (the same one
// the DynamoDB store is held to, on the local DynamoDB engine, in the integration project).
import { ConcurrencyError } from '../../functions/shared/errors';
import { AggregateStore } from '../../functions/shared/event-store';
import { InMemoryEventStore } from '../../functions/shared/in-memory-event-store';
import { eventStoreContract } from '../support/event-store-contract';

const events = new InMemoryEventStore();
eventStoreContract('in memory', () => events, 'events');

// Not part of the shared contract: DynamoDB refuses a transaction with two operations on one item
// (ValidationException), and the in-memory store does as DynamoDB does; the event store never builds such a
// transaction.
test('the in-memory store refuses a transaction that names one item twice, as no race but an error', async () => {
  const store = new AggregateStore(events, 'events', 'Counter', {
    foldVersion: 1,
    initial: 0,
    evolve: (n: number) => n + 1,
  });
  const meta = { now: new Date() };
  const event = { type: 'Incremented', schemaVersion: 1, data: {} };
  const refused = events.write([store.pending('twice', 0, [event], 0, meta), store.unchanged('twice', 0)]);
  await expect(refused).rejects.toThrow('names one item more than once');
  await expect(refused).rejects.not.toBeInstanceOf(ConcurrencyError);
  expect(await store.load('twice')).toEqual({ state: 0, version: 0 });
});

test('a snapshot of the fold’s version is upcast to the current shape on load, with no refold', async () => {
  const legacy = new AggregateStore(events, 'events', 'Shape', {
    foldVersion: 1,
    initial: { shape: 'old' as string },
    evolve: (s: { shape: string }) => s,
  });
  await legacy.append(
    'shaped',
    0,
    [{ type: 'Made', schemaVersion: 1, data: {} }],
    { shape: 'old' },
    { now: new Date() },
  );
  const current = new AggregateStore(events, 'events', 'Shape', {
    foldVersion: 1,
    initial: { shape: 'new' as string },
    evolve: (s: { shape: string }) => s,
    upcastState: (s: { shape: string }) => (s.shape === 'old' ? { shape: 'new' } : s),
  });
  const pages = events.calls.pages;
  expect(await current.load('shaped')).toEqual({ state: { shape: 'new' }, version: 1 });
  expect((await current.first('shaped'))?.state).toEqual({ shape: 'new' });
  expect(events.calls.pages).toBe(pages);
});
