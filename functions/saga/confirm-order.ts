import { orderDecider } from '../orders';
import { paymentIdFor } from '../payments';
import { isRejection } from '../shared/decider';
import { retryOnConflict } from '../shared/event-store';
import type { SagaContext } from './context';
import type { StepInput, StepOutput } from './contract';
import { confirmationRefused } from './rules';
import { failureOf } from './steps';

/**
 * The saga's last step, ConfirmOrder: confirms the order (see the order's
 * decider for when it may be); its stock becomes sold in the same transaction.
 */
export function confirmOrder({ orders, stock, observer, loadOrder }: SagaContext) {
  return (input: StepInput<'confirm'>, now: Date): Promise<StepOutput<'confirm'>> => {
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
  };
}
