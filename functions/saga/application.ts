import { type CustomersStore, customerDecider } from '../accounts';
import { type OrderStock, shardsAfter } from '../inventory';
import {
  type CancellationReason,
  type Order,
  type OrderPlaced,
  type OrdersStore,
  orderDecider,
  type PendingOrder,
} from '../orders';
import { type PaymentsStore, paymentIdFor } from '../payments';
import { acceptedEvents, isRejection } from '../shared/decider';
import { ConcurrencyError } from '../shared/errors';
import { type AppendMeta, type EventStore, type PendingAppend, retryOnConflict } from '../shared/event-store';
import { foldEvents } from '../shared/events';
import type { StepInput, StepOutput } from './contract';
import { KnownCustomers } from './known-customers';
import {
  checkDeadline,
  confirmationRefused,
  decideCapture,
  decideCreditRefund,
  decidePaymentUndo,
  outOfStock,
} from './rules';
import { failureOf } from './steps';

/** What the saga's steps read and write: each module's event store, and the inventory's stock of orders. */
export interface SagaStores {
  readonly orders: OrdersStore;
  readonly payments: PaymentsStore;
  readonly customers: CustomersStore;
  readonly stock: OrderStock;
  /** Writes appends of several modules in one transaction (the stock's own go through `stock.append`). */
  readonly events: EventStore;
}

/**
 * How old a customer ReserveStock read may be for CapturePayment to write
 * from it without reading it again. The steps follow each other within
 * milliseconds when the saga runs freely; when its steps queue for seconds,
 * the customer's other orders have often moved it on meanwhile, and a stale
 * version costs a failed transaction before the read anyway (measured at
 * 50/s with the steps queued, without this bound: 84–94% of the captures).
 */
const HANDED_ON_CUSTOMER_MAX_AGE_MS = 250;

/** Of two customers seen, the one of the later version. */
function newer<C extends { version: number }>(a: C | undefined, b: C | undefined): C | undefined {
  return a && b ? (a.version >= b.version ? a : b) : (a ?? b);
}

function youngCustomer(customer: StepInput<'capture'>['customer'], now: Date) {
  if (!customer?.state) return undefined;
  return now.getTime() - Date.parse(customer.readAt) <= HANDED_ON_CUSTOMER_MAX_AGE_MS ? customer : undefined;
}

/** What the steps report as they go: the functions publish it as EMF metrics, the unit tests record it. */
export interface SagaObserver {
  started(): void;
  confirmed(order: Order, now: Date): void;
  cancelled(order: Order, now: Date, reason: CancellationReason): void;
}

/**
 * The order saga's steps as use cases: each reads the aggregates it needs,
 * decides with their deciders and the saga's rules (rules.ts), and writes
 * what it decided in one transaction across the modules' tables, retrying
 * from a fresh read when another writer got there first.
 */
export function sagaUseCases(
  { orders, payments, customers, stock, events }: SagaStores,
  observer: SagaObserver,
  /** What this sandbox knows of customers (one per sandbox: the module's). */
  known: KnownCustomers = new KnownCustomers(),
) {
  async function loadOrder(orderId: string) {
    const loaded = await orders.load(orderId);
    if (!loaded.state) throw new Error(`order ${orderId} does not exist`);
    return { state: loaded.state, version: loaded.version };
  }

  /** The order as its `OrderPlaced` (every field of which the reserving step is given) left it. */
  function asPlaced(input: StepInput<'reserve'>): { state: Order; version: number } {
    const { orderId, customerId, items, totalCents, deadline, placedAt } = input;
    const placed: OrderPlaced = {
      type: 'OrderPlaced',
      schemaVersion: 1,
      data: { orderId, customerId, items, totalCents, deadline, placedAt },
    };
    return { state: foldEvents(orderDecider, null, [placed]) as Order, version: 1 };
  }

  /**
   * Cancels a pending order with `reason` and undoes everything done for it,
   * in one transaction: the order's `OrderCancelled`, the shards'
   * `StockReleased` for the stock it holds, and its payment refunded with the
   * customer's credit given back (or voided, if none was taken). Every saga
   * step's write is conditional on what it read (the order's version, the
   * payment not existing yet), so no step still in flight can land after it,
   * and a confirmation and a cancellation can never both land. `by`, the
   * execution asking, must own the order's saga (none: the sweeper). Returns
   * the order as it was before, if this call cancelled it.
   */
  const cancelOrder = (
    orderId: string,
    reason: CancellationReason,
    meta: AppendMeta,
    by?: string,
  ): Promise<Order | undefined> =>
    retryOnConflict(async () => {
      const { state, version } = await orders.load(orderId);
      const command = { type: 'Cancel', reason, now: meta.now, ...(by === undefined ? {} : { by }) } as const;
      const cancellable = orderDecider.decide(command, state);
      if (isRejection(cancellable) || state?.status !== 'PENDING') return undefined;
      const [payment, released] = await Promise.all([
        paymentUndoing(orderId, meta),
        state.heldStock ? stock.heldStockAppends('StockReleased', state, state.heldStock, meta) : [],
      ]);
      const cancelled = payment.recorded
        ? acceptedEvents(orderDecider.decide({ ...command, paymentId: payment.recorded }, state))
        : cancellable.events;
      await stock.append([
        orders.pending(orderId, version, cancelled, state, meta),
        ...released,
        ...payment.appends,
      ]);
      return state;
    });

  /** What undoing the order's payment writes (see `decidePaymentUndo`): the customer is read only for a refund. */
  async function paymentUndoing(orderId: string, meta: AppendMeta) {
    const paymentId = paymentIdFor(orderId);
    const payment = await payments.load(paymentId);
    const undo = decidePaymentUndo(paymentId, orderId, payment.state, meta.now);
    const appends: PendingAppend[] = [];
    if (undo.payment.length > 0) {
      appends.push(payments.pending(paymentId, payment.version, undo.payment, payment.state, meta));
    }
    if (undo.refund && payment.state && payment.state.status !== 'VOIDED') {
      const customerId = payment.state.customerId;
      known.forget(customerId);
      const customer = await customers.load(customerId);
      const refund = decideCreditRefund(undo.refund, customer.state);
      if (refund.kind === 'broken') throw failureOf(refund);
      appends.push(customers.pending(customerId, customer.version, refund.events, customer.state, meta));
    }
    return { recorded: undo.recorded, appends };
  }

  /** The customer, read now; remembered by this sandbox. */
  async function readCustomer(customerId: string, now: Date) {
    const customer = await customers.load(customerId);
    known.remember(customerId, customer, now.getTime());
    return customer;
  }

  /** The customer as this sandbox knows it (see KnownCustomers), else read now: for CapturePayment to start from. */
  async function customerFor(customerId: string, now: Date) {
    const held = known.trusted(customerId, now.getTime());
    if (held) return { ...held.customer, readAt: new Date(held.at).toISOString() };
    return { ...(await readCustomer(customerId, now)), readAt: now.toISOString() };
  }

  return {
    cancelOrder,

    /**
     * Claims the order for this execution and takes the stock of every item,
     * all or nothing, in one transaction of the order's `OrderStockReserved`
     * and the shards' `StockReserved`. The first execution to claim a pending
     * order runs its saga, and so does that same execution on a retry; any
     * other (the request and the bus both start one) stops here, having done
     * nothing. An order short of stock is claimed alone (`OrderSagaStarted`)
     * before the refusal, so that the other execution stops too.
     */
    reserve: (input: StepInput<'reserve'>, now: Date): Promise<StepOutput<'reserve'>> => {
      // The first attempt takes the order as placed (version 1, folded from the OrderPlaced this execution
      // started with) without reading it: if anything was appended since (the other execution's claim, a
      // cancellation), every write below is conditional on version 1 and fails, and the attempts after it
      // read. Past the deadline the outcome depends on the order's real state, so it is read at once.
      // Likewise only the first attempt takes shards unread (see TRUSTED_SHARD_MS).
      const beforeDeadline = now.getTime() < Date.parse(input.deadline);
      return retryOnConflict(async (attempt) => {
        const first = attempt === 1;
        const { executionArn } = input;
        const meta = { now, correlationId: input.correlationId };
        const { state, version } = first && beforeDeadline ? asPlaced(input) : await loadOrder(input.orderId);
        const claim = orderDecider.decide({ type: 'ClaimSaga', executionArn }, state);
        if (isRejection(claim) || state.status !== 'PENDING') return { proceed: false as const };
        // ConfirmOrder takes the order from here, as it now is (a stale one fails its transaction).
        if (state.heldStock) {
          const customer = await customerFor(input.customerId, now);
          return { proceed: true as const, order: { state, version }, shards: [], customer };
        }
        const deadline = checkDeadline(input, now);
        if (deadline.kind === 'refuse') throw failureOf(deadline);
        // The customer is read here, with the shards, for CapturePayment to start from: one round trip
        // fewer in the saga than reading it there. Not at all if this sandbox knows it (see KnownCustomers).
        const [planned, customer] = await Promise.all([
          stock.planOrderStock(input.orderId, input.items, meta, first),
          customerFor(input.customerId, now),
        ]);
        if ('outOfStock' in planned) {
          await orders.append(input.orderId, version, claim.events, state, meta);
          throw failureOf(outOfStock(planned.outOfStock));
        }
        const reserved = orderDecider.decide(
          { type: 'ReserveStock', executionArn, parts: planned.parts },
          state,
        );
        if (isRejection(reserved)) return { proceed: false as const };
        await stock.append([
          orders.pending(input.orderId, version, reserved.events, state, meta),
          ...planned.appends,
        ]);
        if (state.sagaExecutionArn === undefined) observer.started();
        return {
          proceed: true as const,
          order: {
            state: foldEvents(orderDecider, state, reserved.events) as PendingOrder,
            version: version + 1,
          },
          shards: shardsAfter(planned.appends),
          customer,
        };
      });
    },

    /**
     * Captures the order's total against the customer's credit (see
     * `decideCapture`). One payment per order (its id derives from the
     * order's), so a repeated capture finds the first; the capture and the
     * customer's credit change are one transaction, conditional on the
     * customer's version, so concurrent orders of one customer cannot together
     * exceed the limit.
     */
    capture: (input: StepInput<'capture'>, now: Date): Promise<StepOutput<'capture'>> => {
      // The first attempt writes the payment as new without reading it (a repeat finds it there and fails
      // the write), and starts from the customer as ReserveStock read it, if that read is young, or as this
      // sandbox knows it (KnownCustomers), the later of the two: a capture writes the customer conditional
      // on that version, so a stale one fails and the attempts after it read both. A refusal writes nothing
      // of the customer, so it is decided again on a fresh read.
      const handedOnAtStart = newer(
        youngCustomer(input.customer, now),
        known.trusted(input.customerId, now.getTime())?.customer,
      );
      return retryOnConflict(async (attempt) => {
        const first = attempt === 1;
        const handedOn = first ? handedOnAtStart : undefined;
        const paymentId = paymentIdFor(input.orderId);
        const [existing, startedFrom] = await Promise.all([
          first ? { state: null, version: 0 } : payments.load(paymentId),
          handedOn ?? readCustomer(input.customerId, now),
        ]);
        let customer = startedFrom;
        let decided = decideCapture(paymentId, existing.state, customer.state, input, now);
        if (handedOn && decided.kind === 'decline') {
          customer = await readCustomer(input.customerId, now);
          decided = decideCapture(paymentId, existing.state, customer.state, input, now);
        }
        const unread = customer === handedOn;
        if (decided.kind === 'done') return { paymentId };
        if (decided.kind === 'refuse' || decided.kind === 'broken') throw failureOf(decided);
        const meta = { now, correlationId: input.correlationId };
        const paymentAppend = payments.pending(paymentId, 0, decided.payment, null, meta);
        const credit = decided.kind === 'capture' && customer.state ? decided.credit : undefined;
        const creditAppend = credit
          ? [customers.pending(input.customerId, customer.version, credit, customer.state, meta)]
          : [];
        try {
          await events.write([paymentAppend, ...creditAppend]);
        } catch (error) {
          if (error instanceof ConcurrencyError && error.aggregateIds.includes(input.customerId)) {
            known.forget(input.customerId);
            if (unread) known.wrote(true, now.getTime());
          }
          throw error;
        }
        if (credit) {
          if (unread) known.wrote(false, now.getTime());
          const after = {
            state: foldEvents(customerDecider, customer.state, credit),
            version: customer.version + credit.length,
          };
          known.remember(input.customerId, after, now.getTime());
        }
        if (decided.kind === 'decline') throw failureOf(decided.refusal);
        return { paymentId };
      });
    },

    /** Confirms the order (see the order's decider for when it may be); its stock becomes sold in the same transaction. */
    confirm: (input: StepInput<'confirm'>, now: Date): Promise<StepOutput<'confirm'>> => {
      // The order and its shards as ReserveStock left them, from the saga's state: trusted on the first
      // attempt only (if one moved on since, the transaction fails, and the attempts after it read them).
      let known: Pick<StepInput<'confirm'>, 'order' | 'shards'> = input;
      return retryOnConflict(async () => {
        const { state, version } = known.order ?? (await loadOrder(input.orderId));
        const knownShards = known.shards;
        known = {};
        const decided = orderDecider.decide(
          { type: 'Confirm', paymentId: paymentIdFor(input.orderId), now },
          state,
        );
        if (isRejection(decided)) throw failureOf(confirmationRefused(state, decided.rejection));
        if (decided.events.length === 0 || state.status !== 'PENDING' || !state.heldStock) {
          return { status: 'CONFIRMED' as const };
        }
        // Conditional on the order's version: a cancellation (which refunds the payment in its own
        // transaction) landing meanwhile fails it, and it fails the cancellation.
        const meta = { now, correlationId: input.correlationId };
        const sold = await stock.heldStockAppends('StockSold', state, state.heldStock, meta, knownShards);
        await stock.append([orders.pending(input.orderId, version, decided.events, state, meta), ...sold]);
        observer.confirmed(state, now);
        return { status: 'CONFIRMED' as const };
      });
    },

    /**
     * Compensation: cancels the order with its reason, undoing in the same
     * transaction whatever was done for it (its stock given back, its payment
     * refunded or voided). An execution that lost the claim (it failed before
     * learning so) leaves the owner's order alone.
     */
    cancel: async (input: StepInput<'cancel'>, now: Date): Promise<StepOutput<'cancel'>> => {
      const { reason } = input;
      const meta = { now, correlationId: input.correlationId };
      const cancelled = await cancelOrder(input.orderId, reason, meta, input.executionArn);
      if (cancelled) observer.cancelled(cancelled, now, reason);
      return { cancelled: cancelled !== undefined, reason };
    },
  };
}
