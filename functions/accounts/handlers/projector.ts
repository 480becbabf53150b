import { env } from '../../shared/aws';
import { projector, upsertView } from '../../shared/views';
import { type Customer, customerView } from '../domain';

const VIEWS_TABLE = env('VIEWS_TABLE');

/** Keeps `GET /customers/{id}`'s view, credit included, from the accounts stream. */
export const handler = projector(async (event) => {
  if (event.aggregateType !== 'Customer' || !event.state) return;
  await upsertView(
    VIEWS_TABLE,
    event.aggregateId,
    'version',
    event.version,
    customerView(event.state as Customer),
  );
});
