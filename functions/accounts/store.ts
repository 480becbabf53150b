import { dynamoEvents, env } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { customerDecider } from './domain';

export const customers = (tableName = env('ACCOUNTS_TABLE'), events: EventStore = dynamoEvents) =>
  new AggregateStore(events, tableName, 'Customer', customerDecider);

export type CustomersStore = ReturnType<typeof customers>;
