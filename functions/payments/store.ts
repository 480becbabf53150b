import { dynamoEvents, fromEnvironment } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { paymentDecider } from './domain';
import { paymentsEnvironment } from './seams';

export const paymentsStore = (
  tableName = fromEnvironment(paymentsEnvironment).paymentsTable,
  events: EventStore = dynamoEvents,
) => new AggregateStore(events, tableName, 'Payment', paymentDecider);

export type PaymentsStore = ReturnType<typeof paymentsStore>;
