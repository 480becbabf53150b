import type { CustomersStore } from '../accounts';
import type { OrderStock } from '../inventory';
import type { CancellationReason, Order, OrdersStore } from '../orders';
import type { PaymentsStore } from '../payments';
import type { EventStore } from '../shared/event-store';
import type { KnownCustomers } from './known-customers';

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
 * What every use case of the saga works with: the stores, the observer,
 * what this sandbox knows of customers, and the reads the steps share.
 */
export interface SagaContext extends SagaStores {
  readonly observer: SagaObserver;
  /** What this sandbox knows of customers (one per sandbox: the module's). */
  readonly known: KnownCustomers;
  /** The order as stored; one that does not exist is a broken saga input. */
  loadOrder(orderId: string): Promise<{ state: Order; version: number }>;
  /** The customer, read now; remembered by this sandbox. */
  readCustomer(customerId: string, now: Date): Promise<LoadedCustomer>;
  /** The customer as this sandbox knows it (see KnownCustomers), else read now: for CapturePayment to start from. */
  customerFor(customerId: string, now: Date): Promise<LoadedCustomer & { readAt: string }>;
}

export function sagaContext(stores: SagaStores, observer: SagaObserver, known: KnownCustomers): SagaContext {
  const { orders, customers } = stores;
  async function loadOrder(orderId: string) {
    const loaded = await orders.load(orderId);
    if (!loaded.state) throw new Error(`order ${orderId} does not exist`);
    return { state: loaded.state, version: loaded.version };
  }
  async function readCustomer(customerId: string, now: Date) {
    const customer = await customers.load(customerId);
    known.remember(customerId, customer, now.getTime());
    return customer;
  }
  async function customerFor(customerId: string, now: Date) {
    const held = known.trusted(customerId, now.getTime());
    if (held) return { ...held.customer, readAt: new Date(held.at).toISOString() };
    return { ...(await readCustomer(customerId, now)), readAt: now.toISOString() };
  }
  return { ...stores, observer, known, loadOrder, readCustomer, customerFor };
}
