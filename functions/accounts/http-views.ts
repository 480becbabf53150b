import { availableCreditCents, type Customer, type CustomerProfile } from './domain';

/** A customer as `GET /customers/{id}` answers it. */
export const customerView = (c: Customer & CustomerProfile) => ({
  customerId: c.customerId,
  name: c.name,
  email: c.email,
  creditLimitCents: c.creditLimitCents,
  availableCreditCents: availableCreditCents(c),
  status: c.status,
  createdAt: c.createdAt,
});
