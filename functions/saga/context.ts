import type { CustomersStore } from '../accounts';
import type { OrderStock } from '../inventory';
import type { CancellationReason, Order, OrdersStore } from '../orders';
import type { PaymentsStore } from '../payments';
import type { EventStore } from '../shared/event-store';

/** What the saga's steps read and write: each module's event store, and the inventory's stock of orders. */
export interface SagaStores {
  readonly orders: OrdersStore;
  readonly payments: PaymentsStore;
  readonly customers: CustomersStore;
  readonly stock: OrderStock;
  /** Writes appends of several modules in one transaction (the stock's own go through `stock.append`). */
  readonly events: EventStore;
}

/** What the steps report as they go: the functions publish it as EMF metrics, the unit tests record it. */
export interface SagaObserver {
  started(): void;
  confirmed(order: Order, now: Date): void;
  cancelled(order: Order, now: Date, reason: CancellationReason): void;
}

type LoadedCustomer = Awaited<ReturnType<CustomersStore['load']>>;

/**
 * What every use case of the saga works with: the stores, the observer, and
 * the reads the steps share.
 */
export interface SagaContext extends SagaStores {
  readonly observer: SagaObserver;
  /** The order as stored; one that does not exist is a broken saga input. */
  loadOrder(orderId: string): Promise<{ state: Order; version: number }>;
  /** The customer, read now (consistently), with when: for a later step to start from. */
  readCustomer(customerId: string, now: Date): Promise<LoadedCustomer & { readAt: string }>;
}

export function sagaContext(stores: SagaStores, observer: SagaObserver): SagaContext {
  const { orders, customers } = stores;
  async function loadOrder(orderId: string) {
    const loaded = await orders.load(orderId);
    if (!loaded.state) throw new Error(`order ${orderId} does not exist`);
    return { state: loaded.state, version: loaded.version };
  }
  async function readCustomer(customerId: string, now: Date) {
    return { ...(await customers.load(customerId)), readAt: now.toISOString() };
  }
  return { ...stores, observer, loadOrder, readCustomer };
}
