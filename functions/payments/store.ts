import { documents, fromEnvironment } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { paymentFold } from './domain';
import { paymentsEnvironment } from './seams';

export const paymentsStore = (tableName = fromEnvironment(paymentsEnvironment).paymentsTable) =>
  new AggregateStore(documents, tableName, 'Payment', paymentFold);
