import { env } from '../../shared/aws';
import { projector, upsertView } from '../../shared/views';
import { type Order, orderView } from '../domain';
import { pendingPartition } from '../view';

const VIEWS_TABLE = env('VIEWS_TABLE');

/**
 * Keeps `GET /orders/{id}`'s view from the orders stream, and the index of
 * pending orders by deadline that the sweeper reads (present only while PENDING).
 */
export const handler = projector(async (event) => {
  if (event.aggregateType !== 'Order' || !event.state) return;
  const order = event.state as Order;
  const pending = order.status === 'PENDING';
  await upsertView(
    VIEWS_TABLE,
    event.aggregateId,
    'version',
    event.version,
    {
      ...orderView(order),
      deadline: order.deadline,
      ...(pending ? { pendingPartition: pendingPartition(order.orderId) } : {}),
      ...(order.sagaExecutionArn ? { sagaExecutionArn: order.sagaExecutionArn } : {}),
    },
    pending ? [] : ['pendingPartition'],
  );
});
