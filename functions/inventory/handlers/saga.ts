import { beginSaga } from '../../orders/domain';
import { ordersStore } from '../../orders/store';
import { retryOnConflict } from '../../shared/event-store';
import { metrics } from '../../shared/powertools';
import { assertBeforeDeadline, SagaError, type SagaStepInput, sagaSteps } from '../../shared/saga';
import { inventoryCommands } from '../commands';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';

const commands = inventoryCommands(inventoryStores(), inventorySettings());
const orders = ordersStore();
/** A saga's reservations outlive its deadline by this much, so they never expire under a running saga. */
const MARGIN_SECONDS = 300;

/**
 * Claims the order for this execution (`OrderSagaStarted`), once: the first
 * execution to claim a pending order runs its saga, and so does that same
 * execution on a retry; any other (the request and the bus both start one)
 * stops. The claim comes before any effect, so an execution that stops has
 * done nothing.
 */
const claim = (input: SagaStepInput, now: Date) =>
  retryOnConflict(async () => {
    const { state, version } = await orders.load(input.orderId);
    if (!state) throw new Error(`order ${input.orderId} does not exist`);
    const decision = beginSaga(state, input.executionArn!);
    await orders.append(input.orderId, version, decision.events, state, {
      now,
      correlationId: input.correlationId,
    });
    return { proceed: decision.proceed, justClaimed: decision.events.length > 0 };
  });

/**
 * Whether this execution may undo the order's saga: it owns the claim, or no
 * execution claimed the order (and so nothing was done for it). An execution
 * that lost the claim and failed on its way out must not touch the winner's work.
 */
export async function mayCompensate(input: SagaStepInput) {
  const { state } = await orders.load(input.orderId);
  const owner = state?.sagaExecutionArn;
  return owner === undefined || owner === input.executionArn;
}

/** The saga's stock steps: claim the order and reserve every item (all or nothing), or release what was reserved. */
export const handler = sagaSteps({
  reserve: async (input, now) => {
    assertBeforeDeadline(input, now);
    const claimed = await claim(input, now);
    if (!claimed.proceed) return { proceed: false };
    if (claimed.justClaimed) {
      metrics.addMetric('SagaStarted', 'Count', 1);
      metrics.publishStoredMetrics();
    }
    const ttlSeconds = Math.ceil((Date.parse(input.deadline) - now.getTime()) / 1000) + MARGIN_SECONDS;
    const result = await commands.reserveForOrder(
      input.orderId,
      input.items,
      { now, correlationId: input.correlationId },
      ttlSeconds,
      claimed.justClaimed,
    );
    if ('outOfStock' in result) {
      throw new SagaError('OutOfStock', `not enough stock of ${result.outOfStock.join(', ')}`);
    }
    return { proceed: true, ...result };
  },

  release: async (input, now) => {
    if (!(await mayCompensate(input))) return { released: false };
    await commands.releaseForOrder(input.orderId, input.items, { now, correlationId: input.correlationId });
    return { released: true };
  },
});
