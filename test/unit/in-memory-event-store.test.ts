// The in-memory event store keeps the event store's contract (the same one
// DynamoDB Local is held to in the integration project).
import { InMemoryEventStore } from '../../functions/shared/in-memory-event-store';
import { eventStoreContract } from '../support/event-store-contract';

const events = new InMemoryEventStore();
eventStoreContract('in memory', () => events, 'events');
