import { documents, fromEnvironment } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { partitionOf } from '../shared/ids';
import { type OrderEvent, orderFold } from './domain';
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

export const ordersStore = (tableName = fromEnvironment(ordersEnvironment).ordersTable) =>
  new AggregateStore(documents, tableName, 'Order', orderFold, placedIndexKeys);
