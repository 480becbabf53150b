import { type CustomerOwnership, type CustomersStore, customerOwnership } from '../accounts';
import type { Caller } from '../shared/caller';
import { acceptedEvents } from '../shared/decider';
import type { AppendMeta } from '../shared/event-store';
import { isId } from '../shared/ids';
import { type Order, type OrderPlaced, orderDecider } from './domain';
import type { OrdersStore } from './store';

/** What placing an order needs to know of products: their price, if they exist. */
export interface ProductCatalogue {
  loadProduct(productId: string): Promise<{ readonly productId: string; readonly priceCents: number } | null>;
}

/** Placing an order that names a customer or products that do not exist: each named by its field. */
export interface UnknownReferences {
  readonly code: 'UNKNOWN_REFERENCES';
  readonly missing: readonly { field: string; id: string }[];
}

/** The caller the use cases trust when none is named: an operator, for anyone. */
const TRUSTED: Caller = { sub: '', isAdmin: true };

/** How a missing customer is named when the caller gave none and has none of its own (as `GET /customers/me`). */
const OWN_CUSTOMER = 'me';

/** Customers are never removed: once seen, a customer id needs no read again in this sandbox. */
const KNOWN_CUSTOMERS_MAX = 10_000;

/** The orders module's use cases, on its event store (DynamoDB in the functions, in memory in the unit tests). */
export function ordersUseCases(
  orders: OrdersStore,
  customers: CustomersStore,
  catalogue: ProductCatalogue,
  settings: { readonly sagaDeadlineSeconds: number },
  ownership: CustomerOwnership = customerOwnership(customers),
) {
  const knownCustomers = new Set<string>();
  async function customerExists(customerId: string) {
    if (knownCustomers.has(customerId)) return true;
    const { state } = await customers.load(customerId);
    if (!state) return false;
    if (knownCustomers.size >= KNOWN_CUSTOMERS_MAX) knownCustomers.clear();
    knownCustomers.add(customerId);
    return true;
  }

  /** The order as its newest event item holds it: read-your-writes, no read model. */
  async function order(orderId: string): Promise<Order | undefined> {
    if (!isId('ord', orderId)) return undefined;
    return (await orders.load(orderId)).state ?? undefined;
  }

  return {
    /**
     * Places an order under a new id, priced now: the customer and every
     * product read at once, then its first event appended with no read of the
     * order (the append at version 0 is the guard: a repeat of the request
     * finds it made).
     */
    async place(
      orderId: string,
      input: { customerId?: string | undefined; items: readonly { productId: string; quantity: number }[] },
      meta: AppendMeta,
      /** Who places it: a shop caller only for its own customer. Omitted: a trusted caller (the tests). */
      caller: Caller = TRUSTED,
    ): Promise<{ order: Order; placed: OrderPlaced } | { rejection: UnknownReferences }> {
      // Without a customerId, the caller's own customer; a shop caller naming another's is answered as
      // if it named an unknown one (nothing tells it that the id exists).
      const customerId = input.customerId ?? (await ownership.customerOf(caller.sub));
      const [customer, ...products] = await Promise.all([
        customerId !== undefined && isId('cus', customerId)
          ? customerExists(customerId).then(
              async (exists) => exists && (await ownership.owns(caller, customerId)),
            )
          : false,
        ...input.items.map((i) => (isId('prd', i.productId) ? catalogue.loadProduct(i.productId) : null)),
      ]);
      const missing = [
        ...(customer ? [] : [{ field: 'customerId', id: customerId ?? OWN_CUSTOMER }]),
        ...input.items.flatMap((item, i) =>
          products[i] ? [] : [{ field: `items.${i}.productId`, id: item.productId }],
        ),
      ];
      if (missing.length > 0) return { rejection: { code: 'UNKNOWN_REFERENCES', missing } };
      const prices = new Map(products.map((p) => [p!.productId, p!.priceCents]));
      const command = {
        type: 'Place',
        orderId,
        customerId: customerId!,
        items: input.items,
        prices,
        now: meta.now,
        ...settings,
      } as const;
      const events = acceptedEvents(orderDecider.decide(command, null));
      const order = (await orders.append(orderId, 0, events, null, meta))!;
      return { order, placed: events[0] as OrderPlaced };
    },

    /** The order as its first append left it, and the fingerprint of the request that placed it. */
    async placement(orderId: string) {
      const first = await orders.first(orderId);
      return first?.state ? { order: first.state, requestHash: first.requestHash } : undefined;
    },

    order,

    /** The order if `caller` may see it (its customer's, or an admin): another's is as unknown. */
    async orderFor(caller: Caller, orderId: string): Promise<Order | undefined> {
      const found = await order(orderId);
      return found && (await ownership.owns(caller, found.customerId)) ? found : undefined;
    },
  };
}
