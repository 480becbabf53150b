import { dynamoEvents, fromEnvironment } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { customerDecider } from './domain';
import { accountsEnvironment } from './seams';

export const customers = (
  tableName = fromEnvironment(accountsEnvironment).accountsTable,
  events: EventStore = dynamoEvents,
) => new AggregateStore(events, tableName, 'Customer', customerDecider);

export type CustomersStore = ReturnType<typeof customers>;
