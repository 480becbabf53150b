import { notFound } from '../../shared/errors';
import { httpHandler, json, requireBody, validate } from '../../shared/http';
import { idempotentCreation } from '../../shared/idempotency';
import { isId } from '../../shared/ids';
import { RegisterCustomer } from '../contract';
import { type Customer, customerView, register } from '../domain';
import { ACCOUNTS_ROUTES } from '../seams';
import { customers } from '../store';

const store = customers();

const registered = (customer: Customer) =>
  json(201, customerView(customer), { location: `/customers/${customer.customerId}` });

export const handler = httpHandler(ACCOUNTS_ROUTES, {
  registerCustomer: idempotentCreation(
    'cus',
    (request) => validate(RegisterCustomer, requireBody(request)),
    async (input, { now, correlationId }, { id: customerId, requestHash }) => {
      const events = register({ customerId, ...input, now });
      return registered(
        (await store.append(customerId, 0, events, null, { now, correlationId, requestHash }))!,
      );
    },
    async (customerId) => {
      const first = await store.first(customerId);
      return first?.state ? { requestHash: first.requestHash, result: registered(first.state) } : undefined;
    },
  ),

  getCustomer: async ({ pathParameters }) => {
    const id = pathParameters.customerId;
    if (!isId('cus', id)) throw notFound('customer', String(id));
    // The newest event item carries the customer's state: read-your-writes, no read model.
    const { state } = await store.load(id);
    if (!state) throw notFound('customer', id);
    return json(200, customerView(state));
  },
});
