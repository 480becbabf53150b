import { env } from '../../shared/aws';
import { projector, upsertView } from '../../shared/views';
import { type Order, orderView } from '../domain';

const VIEWS_TABLE = env('VIEWS_TABLE');

/** Keeps `GET /orders/{id}`'s view from the orders stream. */
export const handler = projector(async (event) => {
  if (event.aggregateType !== 'Order' || !event.state) return;
  await upsertView(VIEWS_TABLE, event.aggregateId, 'version', event.version, orderView(event.state as Order));
});
