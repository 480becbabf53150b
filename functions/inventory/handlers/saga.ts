import { assertBeforeDeadline, SagaError, sagaSteps } from '../../shared/saga';
import { inventoryCommands } from '../commands';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';

const commands = inventoryCommands(inventoryStores(), inventorySettings());
/** A saga's reservations outlive its deadline by this much, so they never expire under a running saga. */
const MARGIN_SECONDS = 300;

/** The saga's stock steps: reserve every item (all or nothing), or release what was reserved. */
export const handler = sagaSteps({
  reserve: async (input, now) => {
    assertBeforeDeadline(input, now);
    const ttlSeconds = Math.ceil((Date.parse(input.deadline) - now.getTime()) / 1000) + MARGIN_SECONDS;
    const result = await commands.reserveForOrder(
      input.orderId,
      input.items,
      { now, correlationId: input.correlationId },
      ttlSeconds,
    );
    if ('outOfStock' in result) {
      throw new SagaError('OutOfStock', `not enough stock of ${result.outOfStock.join(', ')}`);
    }
    return result;
  },

  release: async (input, now) => {
    await commands.releaseForOrder(input.orderId, input.items, { now, correlationId: input.correlationId });
    return { released: true };
  },
});
