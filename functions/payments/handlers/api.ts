import { customerOwnership, customers } from '../../accounts';
import { notFound } from '../../shared/errors';
import { httpHandler, json } from '../../shared/http';
import { isId } from '../../shared/ids';
import { shownPayment } from '../domain';
import { paymentView } from '../http-views';
import { PAYMENTS_ROUTES } from '../seams';
import { paymentsStore } from '../store';

const payments = paymentsStore();
const ownership = customerOwnership(customers());

export const handler = httpHandler(PAYMENTS_ROUTES, {
  getPayment: async ({ pathParameters, caller }) => {
    const id = pathParameters.paymentId;
    if (!isId('pay', id)) throw notFound('payment', String(id));
    // The newest event item carries the payment's state: read-your-writes, no read model.
    const payment = shownPayment((await payments.load(id)).state);
    // Another customer's payment answers exactly as an unknown id.
    if (!payment || !(await ownership.owns(caller, payment.customerId))) throw notFound('payment', id);
    return json(200, paymentView(payment));
  },
});
