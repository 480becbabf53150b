import { env } from '../../shared/aws';
import { notFound } from '../../shared/errors';
import { httpHandler, json } from '../../shared/http';
import { isId } from '../../shared/ids';
import { readModel } from '../../shared/views';
import { paymentView } from '../domain';
import { paymentsStore } from '../store';

const payments = paymentsStore();
const VIEWS_TABLE = env('VIEWS_TABLE');

export const handler = httpHandler({
  'GET /payments/{paymentId}': async ({ pathParameters }) => {
    const id = pathParameters.paymentId;
    if (!isId('pay', id)) throw notFound('payment', String(id));
    const payment = await readModel(VIEWS_TABLE, id, async () => {
      const { state } = await payments.load(id);
      return state && state.status !== 'VOIDED' ? paymentView(state) : undefined;
    });
    if (!payment) throw notFound('payment', id);
    return json(200, payment);
  },
});
