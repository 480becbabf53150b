import { dynamoEvents, env } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { partitionOf } from '../shared/ids';
import { type OrderEvent, orderDecider } from './domain';

/**
 * Placed orders are indexed by deadline (a sparse index of the orders table:
 * only `OrderPlaced` items carry its keys), spread over partitions so that
 * placing orders never writes one hot index key. The sweeper reads it from
 * where it last stopped.
 */
export const PLACED_INDEX = 'placedByDeadline';
export const SWEEP_PARTITIONS = 8;

export const sweepPartition = (orderId: string) => partitionOf(orderId, SWEEP_PARTITIONS);

const placedIndexKeys = (event: OrderEvent) =>
  event.type === 'OrderPlaced'
    ? { sweepPartition: sweepPartition(event.data.orderId), deadline: event.data.deadline }
    : undefined;

export const ordersStore = (tableName = env('ORDERS_TABLE'), events: EventStore = dynamoEvents) =>
  new AggregateStore(events, tableName, 'Order', orderDecider, placedIndexKeys);

export type OrdersStore = ReturnType<typeof ordersStore>;
