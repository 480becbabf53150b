import { availableCreditCents, type Customer } from './domain';

/** A customer as `GET /customers/{id}` answers it. */
export const customerView = (c: Customer) => ({
  customerId: c.customerId,
  name: c.name,
  email: c.email,
  creditLimitCents: c.creditLimitCents,
  availableCreditCents: availableCreditCents(c),
  status: c.status,
  createdAt: c.createdAt,
});
