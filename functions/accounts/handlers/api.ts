import { z } from 'zod';
import { notFound } from '../../shared/errors';
import { httpHandler, integer, json, requireBody, validate } from '../../shared/http';
import { idempotentCommand } from '../../shared/idempotency';
import { isId, newId } from '../../shared/ids';
import { customerView, register } from '../domain';
import { customers } from '../store';

const store = customers();

const RegisterCustomer = z.strictObject({
  name: z.string().trim().min(1).max(200),
  email: z.email().max(254),
  creditLimitCents: integer(0).optional(),
});

export const handler = httpHandler({
  'POST /customers': idempotentCommand(
    (request) => validate(RegisterCustomer, requireBody(request)),
    async (input, { now, correlationId }) => {
      const customerId = newId('cus');
      const state = await store.append(customerId, 0, register({ customerId, ...input, now }), null, {
        now,
        correlationId,
      });
      return json(201, customerView(state!), { location: `/customers/${customerId}` });
    },
  ),

  'GET /customers/{customerId}': async ({ pathParameters }) => {
    const id = pathParameters.customerId;
    if (!isId('cus', id)) throw notFound('customer', String(id));
    // The newest event item carries the customer's state: read-your-writes, no read model.
    const { state } = await store.load(id);
    if (!state) throw notFound('customer', id);
    return json(200, customerView(state));
  },
});
