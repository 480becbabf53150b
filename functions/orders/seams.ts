/** The orders module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, type IndexSeam, numeric, text } from '../shared/seams';

export const ORDERS_ROUTES = {
  placeOrder: 'POST /orders',
  getOrder: 'GET /orders/{orderId}',
  getOrderSaga: 'GET /orders/{orderId}/saga',
} as const;

/** What a function that reads or writes orders needs: their event table. */
export const ordersEnvironment = environment({ ordersTable: text('ORDERS_TABLE') });

/** What placing an order needs beside the tables: how long its saga has. */
export const orderPlacementEnvironment = environment({
  sagaDeadlineSeconds: numeric('SAGA_DEADLINE_SECONDS'),
});

/**
 * The state machine the orders API starts (the saga's fast path) and reads
 * the executions of; the saga's construct sets it once the machine exists.
 */
export const orderSagaEnvironment = environment({ orderSagaArn: text('ORDER_SAGA_ARN') });

/**
 * Placed orders by deadline: a sparse index of the orders table (only
 * `OrderPlaced` items carry its keys), which the saga's sweeper reads from
 * where it last stopped.
 */
export const PLACED_INDEX: IndexSeam = {
  name: 'placedByDeadline',
  partitionKey: 'sweepPartition',
  sortKey: 'deadline',
};
