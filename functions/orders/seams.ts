/** The orders module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, type IndexSeam, numeric, type RouteScopes, SHOP_OR_ADMIN, text } from '../shared/seams';

export const ORDERS_ROUTES = {
  placeOrder: 'POST /orders',
  getOrder: 'GET /orders/{orderId}',
  getOrderSaga: 'GET /orders/{orderId}/saga',
} as const;

/** Who may call each route (the JWT authorizer's scopes); a shop caller reaches only its own orders. */
export const ORDERS_ROUTE_SCOPES: RouteScopes<typeof ORDERS_ROUTES> = {
  placeOrder: SHOP_OR_ADMIN,
  getOrder: SHOP_OR_ADMIN,
  getOrderSaga: SHOP_OR_ADMIN,
};

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
