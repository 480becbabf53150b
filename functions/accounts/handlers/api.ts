import { mayAccess } from '../../shared/caller';
import { ClientError, forbidden, notFound } from '../../shared/errors';
import { httpHandler, json, requireBody, validate } from '../../shared/http';
import { idempotentCreation } from '../../shared/idempotency';
import { isId } from '../../shared/ids';
import { accountsUseCases, CustomerExists, type CustomerRecord, registrationFor } from '../application';
import { customerView } from '../http-views';
import { RegisterCustomer } from '../requests';
import { ACCOUNTS_ROUTES } from '../seams';
import { customers } from '../store';

const customerStore = customers();
const accounts = accountsUseCases(customerStore);

const registered = (customer: CustomerRecord) =>
  json(201, customerView(customer), { location: `/customers/${customer.customerId}` });

export const handler = httpHandler(ACCOUNTS_ROUTES, {
  registerCustomer: idempotentCreation(
    'cus',
    (request) => {
      // Refused before anything is remembered: a shop caller setting an admin's field changes nothing.
      const registration = registrationFor(request.caller, validate(RegisterCustomer, requireBody(request)));
      if ('forbidden' in registration) {
        throw forbidden(
          'only an admin may set these fields',
          registration.forbidden.map((field) => ({ field, message: 'admin only' })),
        );
      }
      return registration.ok;
    },
    async (input, { now, correlationId }, { id, requestHash }) => {
      try {
        return registered(await accounts.register(id, input, { now, correlationId, requestHash }));
      } catch (error) {
        if (error instanceof CustomerExists)
          throw new ClientError(409, 'CUSTOMER_EXISTS', 'this sub has a customer record already');
        throw error;
      }
    },
    async (customerId) => {
      const registration = await accounts.registration(customerId);
      return (
        registration && { requestHash: registration.requestHash, result: registered(registration.customer) }
      );
    },
    customerStore,
  ),

  getCustomer: async ({ pathParameters, caller }) => {
    const id = pathParameters.customerId;
    if (!isId('cus', id)) throw notFound('customer', String(id));
    const customer = await accounts.customer(id);
    // Another's customer answers exactly as an unknown id: nothing tells a guesser that it exists.
    if (!customer || !mayAccess(caller, customer.ownerSub)) throw notFound('customer', id);
    return json(200, customerView(customer));
  },

  getOwnCustomer: async ({ caller }) => {
    const customer = await accounts.customerOwnedBy(caller.sub);
    if (!customer) throw notFound('customer', 'me');
    return json(200, customerView(customer));
  },
});
