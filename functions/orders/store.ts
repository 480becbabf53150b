import { documents, env } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { type OrderEvent, orderFold } from './domain';

/**
 * Placed orders are indexed by deadline (a sparse index of the orders table:
 * only `OrderPlaced` items carry its keys), spread over partitions so that
 * placing orders never writes one hot index key. The sweeper reads it from
 * where it last stopped.
 */
export const PLACED_INDEX = 'placedByDeadline';
export const SWEEP_PARTITIONS = 8;

export function sweepPartition(orderId: string): string {
  let hash = 0;
  for (const c of orderId) hash = (hash * 31 + c.charCodeAt(0)) | 0;
  return `p${Math.abs(hash) % SWEEP_PARTITIONS}`;
}

const placedIndexKeys = (event: OrderEvent) =>
  event.type === 'OrderPlaced'
    ? { sweepPartition: sweepPartition(event.data.orderId), deadline: event.data.deadline }
    : undefined;

export const ordersStore = (tableName = env('ORDERS_TABLE')) =>
  new AggregateStore(documents, tableName, 'Order', orderFold, placedIndexKeys);
