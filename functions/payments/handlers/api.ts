import { notFound } from '../../shared/errors';
import { httpHandler, json } from '../../shared/http';
import { isId } from '../../shared/ids';
import { paymentView } from '../domain';
import { PAYMENTS_ROUTES } from '../seams';
import { paymentsStore } from '../store';

const payments = paymentsStore();

export const handler = httpHandler(PAYMENTS_ROUTES, {
  getPayment: async ({ pathParameters }) => {
    const id = pathParameters.paymentId;
    if (!isId('pay', id)) throw notFound('payment', String(id));
    // The newest event item carries the payment's state: read-your-writes, no read model.
    // A voided payment is the saga's marker that none may be captured: not a payment to show.
    const { state } = await payments.load(id);
    if (!state || state.status === 'VOIDED') throw notFound('payment', id);
    return json(200, paymentView(state));
  },
});
