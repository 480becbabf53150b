import { notFound } from '../../shared/errors';
import { httpHandler, json, requireBody, validate } from '../../shared/http';
import { idempotentCreation } from '../../shared/idempotency';
import { isId } from '../../shared/ids';
import { accountsUseCases } from '../application';
import { RegisterCustomer } from '../contract';
import type { Customer } from '../domain';
import { customerView } from '../http-views';
import { ACCOUNTS_ROUTES } from '../seams';
import { customers } from '../store';

const customerStore = customers();
const accounts = accountsUseCases(customerStore);

const registered = (customer: Customer) =>
  json(201, customerView(customer), { location: `/customers/${customer.customerId}` });

export const handler = httpHandler(ACCOUNTS_ROUTES, {
  registerCustomer: idempotentCreation(
    'cus',
    (request) => validate(RegisterCustomer, requireBody(request)),
    async (input, { now, correlationId }, { id, requestHash }) =>
      registered(await accounts.register(id, input, { now, correlationId, requestHash })),
    async (customerId) => {
      const registration = await accounts.registration(customerId);
      return (
        registration && { requestHash: registration.requestHash, result: registered(registration.customer) }
      );
    },
    customerStore,
  ),

  getCustomer: async ({ pathParameters }) => {
    const id = pathParameters.customerId;
    if (!isId('cus', id)) throw notFound('customer', String(id));
    const customer = await accounts.customer(id);
    if (!customer) throw notFound('customer', id);
    return json(200, customerView(customer));
  },
});
