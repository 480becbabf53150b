import type { ReservationPart } from '../inventory/domain';
import type { DomainEvent, Fold } from '../shared/events';

export type OrderStatus = 'PENDING' | 'CONFIRMED' | 'CANCELLED';
export type CancellationReason =
  | 'OUT_OF_STOCK'
  | 'PAYMENT_DECLINED'
  | 'CONFIRMATION_FAILED'
  | 'TIMEOUT'
  // A saga step failed in a way no retry cured (a bug, or input that breaks the saga's contract).
  | 'STEP_FAILED';

export interface OrderItem {
  readonly productId: string;
  readonly quantity: number;
  readonly priceCents: number;
}

/** The stock shards each item's units came from, in the order of the items. */
export type StockParts = readonly (readonly ReservationPart[])[];

export interface Order {
  readonly orderId: string;
  readonly customerId: string;
  readonly items: readonly OrderItem[];
  readonly totalCents: number;
  readonly status: OrderStatus;
  readonly cancellationReason?: CancellationReason;
  readonly paymentId?: string;
  /** The execution that owns this order's saga; any other execution for it stops at once. */
  readonly sagaExecutionArn?: string;
  /**
   * The stock the saga took for the order, while it holds it. The order itself
   * remembers it (there is no reservation aggregate for an order): reserving
   * writes the order and the shards in one transaction, and so do confirming
   * (the stock becomes sold) and cancelling (it is given back). Each of those
   * appends is conditional on the order's version, so a step acting on a
   * stale order cannot land.
   */
  readonly heldStock?: StockParts;
  /** When the saga must have finished; past it the order is cancelled with TIMEOUT. */
  readonly deadline: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type OrderState = Order | null;

export type OrderEvent =
  | DomainEvent<
      'OrderPlaced',
      {
        orderId: string;
        customerId: string;
        items: OrderItem[];
        totalCents: number;
        deadline: string;
        placedAt: string;
      }
    >
  | DomainEvent<'OrderSagaStarted', { orderId: string; executionArn: string }>
  | DomainEvent<'OrderStockReserved', { orderId: string; executionArn: string; parts: ReservationPart[][] }>
  | DomainEvent<'OrderConfirmed', { orderId: string; paymentId: string; confirmedAt: string }>
  | DomainEvent<
      'OrderCancelled',
      { orderId: string; reason: CancellationReason; paymentId?: string; cancelledAt: string }
    >;

export type OrderPlaced = Extract<OrderEvent, { type: 'OrderPlaced' }>;

/** A final order holds no stock: confirming sold it, cancelling gave it back, in the same transaction. */
function withoutHeldStock(order: Order): Order {
  const { heldStock: _sold, ...rest } = order;
  return rest;
}

export const orderFold: Fold<OrderState, OrderEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'OrderPlaced': {
        const { orderId, customerId, items, totalCents, deadline, placedAt } = event.data;
        return {
          orderId,
          customerId,
          items,
          totalCents,
          status: 'PENDING',
          deadline,
          createdAt: placedAt,
          updatedAt: placedAt,
        };
      }
      case 'OrderSagaStarted':
        return state && { ...state, sagaExecutionArn: event.data.executionArn };
      case 'OrderStockReserved':
        return state && { ...state, sagaExecutionArn: event.data.executionArn, heldStock: event.data.parts };
      case 'OrderConfirmed':
        return (
          state && {
            ...withoutHeldStock(state),
            status: 'CONFIRMED',
            paymentId: event.data.paymentId,
            updatedAt: event.data.confirmedAt,
          }
        );
      case 'OrderCancelled':
        return (
          state && {
            ...withoutHeldStock(state),
            status: 'CANCELLED',
            cancellationReason: event.data.reason,
            ...(event.data.paymentId ? { paymentId: event.data.paymentId } : {}),
            updatedAt: event.data.cancelledAt,
          }
        );
    }
  },
};

/**
 * An order with an event at this version is final: its events are
 * `OrderPlaced`, at most one `OrderSagaStarted`, then one `OrderConfirmed` or
 * `OrderCancelled`, and nothing after (every decision below refuses a final
 * order). Only an order cancelled before its saga started is final sooner.
 */
export const FINAL_FROM_VERSION = 3;

/** Prices the items at placement; prices are looked up by the caller. */
export function place(command: {
  orderId: string;
  customerId: string;
  items: readonly { productId: string; quantity: number }[];
  prices: ReadonlyMap<string, number>;
  sagaDeadlineSeconds: number;
  now: Date;
}): [OrderPlaced] {
  const items = command.items.map((i) => ({
    productId: i.productId,
    quantity: i.quantity,
    priceCents: command.prices.get(i.productId) as number,
  }));
  return [
    {
      type: 'OrderPlaced',
      schemaVersion: 1,
      data: {
        orderId: command.orderId,
        customerId: command.customerId,
        items,
        totalCents: items.reduce((sum, i) => sum + i.priceCents * i.quantity, 0),
        deadline: new Date(command.now.getTime() + command.sagaDeadlineSeconds * 1000).toISOString(),
        placedAt: command.now.toISOString(),
      },
    },
  ];
}

/**
 * Claims the order's saga for one execution. The first execution to claim a
 * pending order proceeds, and so does that same execution on a retry; any
 * other execution, or any execution once the order is final, stops.
 */
export function beginSaga(order: Order, executionArn: string): { proceed: boolean; events: OrderEvent[] } {
  if (order.status !== 'PENDING') return { proceed: false, events: [] };
  if (order.sagaExecutionArn) return { proceed: order.sagaExecutionArn === executionArn, events: [] };
  return {
    proceed: true,
    events: [{ type: 'OrderSagaStarted', schemaVersion: 1, data: { orderId: order.orderId, executionArn } }],
  };
}

/**
 * Claims the order for `executionArn` and records the stock taken for it, in
 * one event: written in one transaction with the shards' events. Only for a
 * pending order that no other execution claimed and that holds no stock yet.
 */
export function reserveStock(
  order: Order,
  executionArn: string,
  parts: StockParts,
): OrderEvent[] | 'CANNOT_RESERVE' {
  if (order.status !== 'PENDING' || order.heldStock) return 'CANNOT_RESERVE';
  if (order.sagaExecutionArn !== undefined && order.sagaExecutionArn !== executionArn)
    return 'CANNOT_RESERVE';
  return [
    {
      type: 'OrderStockReserved',
      schemaVersion: 1,
      data: { orderId: order.orderId, executionArn, parts: parts.map((p) => [...p]) },
    },
  ];
}

/** Confirms a pending order; confirming a confirmed one decides nothing. A cancelled one cannot be. */
export function confirm(order: Order, paymentId: string, now: Date): OrderEvent[] | 'CANNOT_CONFIRM' {
  if (order.status === 'CONFIRMED') return [];
  if (order.status === 'CANCELLED') return 'CANNOT_CONFIRM';
  return [
    {
      type: 'OrderConfirmed',
      schemaVersion: 1,
      data: { orderId: order.orderId, paymentId, confirmedAt: now.toISOString() },
    },
  ];
}

/** Cancels a pending order; a final order is left as it is. */
export function cancel(
  order: Order,
  reason: CancellationReason,
  now: Date,
  paymentId?: string,
): OrderEvent[] {
  if (order.status !== 'PENDING') return [];
  return [
    {
      type: 'OrderCancelled',
      schemaVersion: 1,
      data: {
        orderId: order.orderId,
        reason,
        ...(paymentId ? { paymentId } : {}),
        cancelledAt: now.toISOString(),
      },
    },
  ];
}

/** The public view of an order, as `GET /orders/{id}` answers it. */
export const orderView = (o: Order) => ({
  orderId: o.orderId,
  customerId: o.customerId,
  items: o.items,
  totalCents: o.totalCents,
  status: o.status,
  ...(o.cancellationReason ? { cancellationReason: o.cancellationReason } : {}),
  ...(o.paymentId ? { paymentId: o.paymentId } : {}),
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
});
