import { documents, env } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { orderFold } from './domain';

export const ordersStore = (tableName = env('ORDERS_TABLE')) =>
  new AggregateStore(documents, tableName, 'Order', orderFold);
