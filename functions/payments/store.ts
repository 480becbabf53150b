import { documents, env } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { paymentFold } from './domain';

export const paymentsStore = (tableName = env('PAYMENTS_TABLE')) =>
  new AggregateStore(documents, tableName, 'Payment', paymentFold);
