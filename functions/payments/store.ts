import { dynamoEvents, env } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { paymentDecider } from './domain';

export const paymentsStore = (tableName = env('PAYMENTS_TABLE'), events: EventStore = dynamoEvents) =>
  new AggregateStore(events, tableName, 'Payment', paymentDecider);

export type PaymentsStore = ReturnType<typeof paymentsStore>;
