import { dynamoEvents, fromEnvironment } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { partitionOf } from '../shared/ids';
import { type OrderEvent, orderDecider } from './domain';
import { ordersEnvironment, PLACED_INDEX } from './seams';

/**
 * Placed orders are indexed by deadline (PLACED_INDEX), spread over
 * partitions so that placing orders never writes one hot index key.
 */
export const SWEEP_PARTITIONS = 8;

export const sweepPartition = (orderId: string) => partitionOf(orderId, SWEEP_PARTITIONS);

const placedIndexKeys = (event: OrderEvent) =>
  event.type === 'OrderPlaced'
    ? {
        [PLACED_INDEX.partitionKey]: sweepPartition(event.data.orderId),
        [PLACED_INDEX.sortKey]: event.data.deadline,
      }
    : undefined;

export const ordersStore = (
  tableName = fromEnvironment(ordersEnvironment).ordersTable,
  events: EventStore = dynamoEvents,
) => new AggregateStore(events, tableName, 'Order', orderDecider, placedIndexKeys);

export type OrdersStore = ReturnType<typeof ordersStore>;
