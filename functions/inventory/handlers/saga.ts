import { beginSaga, orderFold, reserveStock } from '../../orders/domain';
import { ordersStore } from '../../orders/store';
import { retryOnConflict } from '../../shared/event-store';
import { foldEvents } from '../../shared/events';
import { metrics } from '../../shared/powertools';
import { assertBeforeDeadline, SagaError, sagaSteps } from '../../shared/saga';
import { inventoryCommands, shardsAfter } from '../commands';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';

const commands = inventoryCommands(inventoryStores(), inventorySettings());
const orders = ordersStore();

/**
 * The saga's first step: claims the order for this execution and takes the
 * stock of every item, all or nothing, in one transaction of the order's
 * `OrderStockReserved` and the shards' `StockReserved`. The first execution
 * to claim a pending order runs its saga, and so does that same execution on
 * a retry; any other (the request and the bus both start one) stops here,
 * having done nothing. An order short of stock is claimed alone
 * (`OrderSagaStarted`) before the refusal, so that the other execution stops too.
 */
export const handler = sagaSteps({
  reserve: (input, now) =>
    retryOnConflict(async () => {
      const executionArn = input.executionArn;
      if (!executionArn) throw new Error('the reserve step needs the executionArn that claims the order');
      const meta = { now, correlationId: input.correlationId };
      const { state, version } = await orders.load(input.orderId);
      if (!state) throw new Error(`order ${input.orderId} does not exist`);
      const claimedByOther = state.sagaExecutionArn !== undefined && state.sagaExecutionArn !== executionArn;
      if (claimedByOther || state.status !== 'PENDING') return { proceed: false };
      // ConfirmOrder takes the order from here, as it now is (a stale one fails its transaction).
      if (state.heldStock) return { proceed: true, order: { state, version }, shards: [] };
      assertBeforeDeadline(input, now);
      const planned = await commands.planOrderStock(input.orderId, input.items, meta);
      if ('outOfStock' in planned) {
        await orders.append(input.orderId, version, beginSaga(state, executionArn).events, state, meta);
        throw new SagaError('OutOfStock', `not enough stock of ${planned.outOfStock.join(', ')}`);
      }
      const events = reserveStock(state, executionArn, planned.parts);
      if (events === 'CANNOT_RESERVE') return { proceed: false };
      await commands.append([
        orders.pending(input.orderId, version, events, state, meta),
        ...planned.appends,
      ]);
      if (state.sagaExecutionArn === undefined) {
        metrics.addMetric('SagaStarted', 'Count', 1);
        metrics.publishStoredMetrics();
      }
      return {
        proceed: true,
        order: { state: foldEvents(orderFold, state, events), version: version + 1 },
        shards: shardsAfter(planned.appends),
      };
    }),
});
