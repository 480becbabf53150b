import type { ReservationPart } from '../inventory';
import { accept, alreadyDone, type Decider, reject } from '../shared/decider';
import type { DomainEvent, Fold } from '../shared/events';

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

interface PlacedOrder {
  readonly orderId: string;
  readonly customerId: string;
  readonly items: readonly OrderItem[];
  readonly totalCents: number;
  /** The execution that owns this order's saga; any other execution for it stops at once. */
  readonly sagaExecutionArn?: string;
  /** When the saga must have finished; past it the order is cancelled with TIMEOUT. */
  readonly deadline: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface PendingOrder extends PlacedOrder {
  readonly status: 'PENDING';
  /**
   * The stock the saga took for the order, while it holds it. The order itself
   * remembers it (there is no reservation aggregate for an order): reserving
   * writes the order and the shards in one transaction, and so do confirming
   * (the stock becomes sold) and cancelling (it is given back). Each of those
   * appends is conditional on the order's version, so a step acting on a
   * stale order cannot land.
   */
  readonly heldStock?: StockParts;
}

/** A final order holds no stock: confirming sold it, cancelling gave it back, in the same transaction. */
export interface ConfirmedOrder extends PlacedOrder {
  readonly status: 'CONFIRMED';
  readonly paymentId: string;
}

export interface CancelledOrder extends PlacedOrder {
  readonly status: 'CANCELLED';
  readonly cancellationReason: CancellationReason;
  /** The payment taken for the order, refunded with the cancellation. */
  readonly paymentId?: string;
}

export type Order = PendingOrder | ConfirmedOrder | CancelledOrder;
export type OrderState = Order | null;
export type OrderStatus = Order['status'];

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

/** A pending order's fields that a final order keeps. */
function final({ status: _status, heldStock: _heldStock, ...placed }: PendingOrder): PlacedOrder {
  return placed;
}

const orderFold: Fold<OrderState, OrderEvent> = {
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
        return state?.status === 'PENDING' ? { ...state, sagaExecutionArn: event.data.executionArn } : state;
      case 'OrderStockReserved':
        return state?.status === 'PENDING'
          ? { ...state, sagaExecutionArn: event.data.executionArn, heldStock: event.data.parts }
          : state;
      case 'OrderConfirmed':
        return state?.status === 'PENDING'
          ? {
              ...final(state),
              status: 'CONFIRMED',
              paymentId: event.data.paymentId,
              updatedAt: event.data.confirmedAt,
            }
          : state;
      case 'OrderCancelled':
        return state?.status === 'PENDING'
          ? {
              ...final(state),
              status: 'CANCELLED',
              cancellationReason: event.data.reason,
              ...(event.data.paymentId ? { paymentId: event.data.paymentId } : {}),
              updatedAt: event.data.cancelledAt,
            }
          : state;
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

export type OrderCommand =
  /** Places an order, pricing its items with the prices the caller looked up. */
  | {
      readonly type: 'Place';
      readonly orderId: string;
      readonly customerId: string;
      readonly items: readonly { productId: string; quantity: number }[];
      readonly prices: ReadonlyMap<string, number>;
      readonly sagaDeadlineSeconds: number;
      readonly now: Date;
    }
  /** Claims the order's saga for one execution, taking no stock (the saga found too little). */
  | { readonly type: 'ClaimSaga'; readonly executionArn: string }
  /** Claims the order's saga for one execution and records the stock taken for it. */
  | { readonly type: 'ReserveStock'; readonly executionArn: string; readonly parts: StockParts }
  | { readonly type: 'Confirm'; readonly paymentId: string; readonly now: Date }
  /** Cancels the order; `by`, when given, is the execution asking, which must own the saga. */
  | {
      readonly type: 'Cancel';
      readonly reason: CancellationReason;
      readonly by?: string;
      readonly paymentId?: string | undefined;
      readonly now: Date;
    };

export type OrderRejection =
  | { readonly code: 'ALREADY_PLACED' }
  | { readonly code: 'NO_SUCH_ORDER' }
  /** The order is confirmed or cancelled: no saga step may change it. */
  | { readonly code: 'ORDER_FINAL'; readonly status: 'CONFIRMED' | 'CANCELLED' }
  /** Another execution owns the order's saga. */
  | { readonly code: 'CLAIMED_BY_OTHER' }
  | { readonly code: 'DEADLINE_PASSED'; readonly deadline: string }
  | { readonly code: 'NO_STOCK_HELD' };

const finalRejection = (order: ConfirmedOrder | CancelledOrder) =>
  reject({ code: 'ORDER_FINAL', status: order.status } as const);

/** Whether `executionArn` may run the order's saga: the first execution to claim it, and that one only. */
const claimedByOther = (order: PendingOrder, executionArn: string) =>
  order.sagaExecutionArn !== undefined && order.sagaExecutionArn !== executionArn;

/**
 * The order: what each command decides, and so when each may happen.
 *
 * - Place: only a new order.
 * - ClaimSaga, ReserveStock: only a pending order, by the execution that
 *   claimed it first (or any, if none did); a repeat by that execution
 *   decides nothing. Stock is reserved once.
 * - Confirm: a pending order, before its deadline, that holds its stock
 *   (confirming sells it); confirming a confirmed order decides nothing, a
 *   cancelled one cannot be confirmed.
 * - Cancel: a pending order, by the execution that owns its saga (or by
 *   anyone when no execution is named: the sweeper).
 */
export const orderDecider: Decider<OrderCommand, OrderState, OrderEvent, OrderRejection> = {
  ...orderFold,
  decide(command, order) {
    if (command.type === 'Place') return order ? reject({ code: 'ALREADY_PLACED' }) : accept(placed(command));
    if (!order) return reject({ code: 'NO_SUCH_ORDER' });
    const { orderId } = order;
    switch (command.type) {
      case 'ClaimSaga':
      case 'ReserveStock': {
        if (order.status !== 'PENDING') return finalRejection(order);
        const { executionArn } = command;
        if (claimedByOther(order, executionArn)) return reject({ code: 'CLAIMED_BY_OTHER' });
        if (command.type === 'ClaimSaga') {
          if (order.sagaExecutionArn) return alreadyDone;
          return accept<OrderEvent>({
            type: 'OrderSagaStarted',
            schemaVersion: 1,
            data: { orderId, executionArn },
          });
        }
        if (order.heldStock) return alreadyDone;
        const parts = command.parts.map((p) => [...p]);
        return accept<OrderEvent>({
          type: 'OrderStockReserved',
          schemaVersion: 1,
          data: { orderId, executionArn, parts },
        });
      }
      case 'Confirm': {
        if (order.status === 'CONFIRMED') return alreadyDone;
        if (command.now.getTime() > Date.parse(order.deadline)) {
          return reject({ code: 'DEADLINE_PASSED', deadline: order.deadline });
        }
        if (order.status === 'CANCELLED') return finalRejection(order);
        if (!order.heldStock) return reject({ code: 'NO_STOCK_HELD' });
        const data = { orderId, paymentId: command.paymentId, confirmedAt: command.now.toISOString() };
        return accept<OrderEvent>({ type: 'OrderConfirmed', schemaVersion: 1, data });
      }
      case 'Cancel': {
        if (order.status !== 'PENDING') return finalRejection(order);
        if (command.by !== undefined && claimedByOther(order, command.by))
          return reject({ code: 'CLAIMED_BY_OTHER' });
        const { reason, paymentId } = command;
        const data = {
          orderId,
          reason,
          ...(paymentId ? { paymentId } : {}),
          cancelledAt: command.now.toISOString(),
        };
        return accept<OrderEvent>({ type: 'OrderCancelled', schemaVersion: 1, data });
      }
    }
  },
};

/** The order's first event: its items priced at placement, its saga's deadline set. */
function placed(command: Extract<OrderCommand, { type: 'Place' }>): OrderPlaced {
  const items = command.items.map((i) => ({
    productId: i.productId,
    quantity: i.quantity,
    priceCents: command.prices.get(i.productId) as number,
  }));
  return {
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
  };
}
