import { env } from '../../shared/aws';
import { projector, upsertView } from '../../shared/views';
import { type Payment, paymentView } from '../domain';

const VIEWS_TABLE = env('VIEWS_TABLE');

/** Keeps `GET /payments/{id}`'s view from the payments stream. */
export const handler = projector(async (event) => {
  if (event.aggregateType !== 'Payment' || !event.state || (event.state as Payment).status === 'VOIDED')
    return;
  await upsertView(
    VIEWS_TABLE,
    event.aggregateId,
    'version',
    event.version,
    paymentView(event.state as Payment),
  );
});
