/**
 * The modules' stores and use cases on one `InMemoryEventStore`, for the unit
 * tests of use cases and saga steps: the same code the functions run, with
 * the event store in memory instead of DynamoDB (the contract test holds the
 * two to the same semantics).
 */
import { accountsUseCases } from '../../functions/accounts/application';
import { customers } from '../../functions/accounts/store';
import { inventoryCommands, type Outcome } from '../../functions/inventory/application';
import { STOCK_CACHE, StockCache } from '../../functions/inventory/stock-cache';
import { inventoryStores } from '../../functions/inventory/store';
import { ordersUseCases } from '../../functions/orders/application';
import type { OrderPlaced } from '../../functions/orders/domain';
import { ordersStore } from '../../functions/orders/store';
import { paymentsStore } from '../../functions/payments/store';
import { type SagaObserver, sagaUseCases } from '../../functions/saga/application';
import type { StepInput } from '../../functions/saga/contract';
import { InMemoryEventStore } from '../../functions/shared/in-memory-event-store';

export const T0 = new Date('2026-03-01T10:00:00.000Z');
export const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
export const EXECUTION = 'arn:aws:states:us-east-1:000000000000:execution:saga:ord';
export const SAGA_DEADLINE_SECONDS = 30;

/** A recording of what the saga reported, in order. */
export function recordingObserver() {
  const reported: string[] = [];
  const observer: SagaObserver = {
    started: () => reported.push('started'),
    confirmed: (order) => reported.push(`confirmed ${order.orderId}`),
    cancelled: (order, _now, reason) => reported.push(`cancelled ${order.orderId} ${reason}`),
  };
  return { reported, observer };
}

export function inMemoryCommerce() {
  const events = new InMemoryEventStore();
  /** The inventory's stores as one sandbox has them: its own stock cache, the shared event store. */
  const sandboxInventory = () => inventoryStores('inventory', new StockCache(STOCK_CACHE), events);
  const stores = {
    orders: ordersStore('orders', events),
    payments: paymentsStore('payments', events),
    customers: customers('accounts', events),
    inventory: sandboxInventory(),
  };
  const inventorySettings = { reservationTtlSeconds: 600, unitsPerShard: 100, maxShards: 8 };
  const inventory = inventoryCommands(stores.inventory, inventorySettings);
  // The saga runs in sandboxes of its own: what it knows of the shards is not what the inventory API's know.
  const sagaInventory = sandboxInventory();
  const accounts = accountsUseCases(stores.customers);
  const orders = ordersUseCases(stores.orders, stores.customers, stores.inventory, {
    sagaDeadlineSeconds: SAGA_DEADLINE_SECONDS,
  });
  const { reported, observer } = recordingObserver();
  /** The saga's steps as one more sandbox of it runs them: knowing only what it read and wrote itself. */
  const sagaSandbox = (ownInventory = sandboxInventory()) =>
    sagaUseCases(
      {
        orders: stores.orders,
        payments: stores.payments,
        customers: stores.customers,
        stock: inventoryCommands(ownInventory, inventorySettings),
        events,
      },
      observer,
    );
  const saga = sagaSandbox(sagaInventory);
  /** The inventory's use cases as another sandbox of its API runs them: knowing only what it read and wrote itself. */
  const inventorySandbox = () => inventoryCommands(sandboxInventory(), inventorySettings);

  let sequence = 0;
  const id = (prefix: string) => `${prefix}_${(++sequence).toString(16).padStart(32, '0')}`;
  const meta = { now: T0, correlationId: 'corr-1' };

  return {
    events,
    stores,
    sagaInventory,
    inventory,
    accounts,
    orders,
    saga,
    sagaSandbox,
    inventorySandbox,
    reported,

    async customer(creditLimitCents = 10_000) {
      return accounts.register(id('cus'), { name: 'Ada', email: 'ada@example.com', creditLimitCents }, meta);
    },

    async product(stock: number, priceCents = 1_000) {
      const input = { sku: `sku-${sequence}`, name: 'Widget', priceCents, stock };
      return succeeded(await inventory.create(input, meta, id('prd'))).product;
    },

    /** Places an order and answers the input every saga step of it receives. */
    async placed(customerId: string, items: { productId: string; quantity: number }[]) {
      const placement = await orders.place(id('ord'), { customerId, items }, meta);
      if ('rejection' in placement) throw new Error(JSON.stringify(placement.rejection));
      return stepInputOf(placement.placed);
    },

    /** The stock of a product summed over its shards, read from the store. */
    async stock(productId: string) {
      return succeeded(await inventory.view(productId)).stock;
    },
  };
}

/** What each step's Task sends for an order, as the state machine builds it from `OrderPlaced`. */
export function stepInputOf(placed: OrderPlaced) {
  const { orderId, customerId, items, totalCents, deadline } = placed.data;
  const order = { orderId, customerId, items, totalCents, deadline, correlationId: 'corr-1' };
  return {
    reserve: (executionArn = EXECUTION): StepInput<'reserve'> => ({
      action: 'reserve',
      ...order,
      placedAt: placed.data.placedAt,
      executionArn,
    }),
    capture: (customer?: StepInput<'capture'>['customer']): StepInput<'capture'> => ({
      action: 'capture',
      ...order,
      ...(customer ? { customer } : {}),
    }),
    confirm: (known: Pick<StepInput<'confirm'>, 'order' | 'shards'> = {}): StepInput<'confirm'> => ({
      action: 'confirm',
      ...order,
      ...known,
    }),
    cancel: (reason: StepInput<'cancel'>['reason'], executionArn = EXECUTION): StepInput<'cancel'> => ({
      action: 'cancel',
      ...order,
      reason,
      executionArn,
    }),
  };
}

/** The result of an inventory use case that must not refuse. */
export function succeeded<T>(outcome: Outcome<T>): T {
  if ('rejection' in outcome) throw new Error(`refused: ${JSON.stringify(outcome.rejection)}`);
  return outcome.ok;
}
