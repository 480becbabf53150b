import { shardsAfter } from '../inventory';
import { type Order, type OrderPlaced, orderDecider, type PendingOrder } from '../orders';
import { isRejection } from '../shared/decider';
import { retryOnConflict } from '../shared/event-store';
import { foldEvents } from '../shared/events';
import type { SagaContext } from './context';
import type { StepInput, StepOutput } from './contract';
import { checkDeadline, outOfStock } from './rules';
import { failureOf } from './steps';

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
 * The saga's first step, ReserveStock: claims the order for this execution
 * and takes the stock of every item, all or nothing, in one transaction of
 * the order's `OrderStockReserved` and the shards' `StockReserved`. The first
 * execution to claim a pending order runs its saga, and so does that same
 * execution on a retry; any other (the request and the bus both start one)
 * stops here, having done nothing. An order short of stock is claimed alone
 * (`OrderSagaStarted`) before the refusal, so that the other execution stops too.
 */
export function reserveStock({ orders, stock, observer, loadOrder, readCustomer }: SagaContext) {
  return (input: StepInput<'reserve'>, now: Date): Promise<StepOutput<'reserve'>> => {
    // The first attempt takes the order as placed (version 1, folded from the OrderPlaced this execution
    // started with) without reading it: if anything was appended since (the other execution's claim, a
    // cancellation), every write below is conditional on version 1 and fails, and the attempts after it
    // read. Past the deadline the outcome depends on the order's real state, so it is read at once.
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
        const customer = await readCustomer(input.customerId, now);
        return { proceed: true as const, order: { state, version }, shards: [], customer };
      }
      const deadline = checkDeadline(input, now);
      if (deadline.kind === 'refuse') throw failureOf(deadline);
      // The customer is read here, with the shards, for CapturePayment to start from: one round trip
      // fewer in the saga than reading it there.
      const [planned, customer] = await Promise.all([
        stock.planOrderStock(input.orderId, input.items, meta),
        readCustomer(input.customerId, now),
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
  };
}
