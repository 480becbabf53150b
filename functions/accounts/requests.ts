/** The accounts module's request bodies: what its handlers validate (registering a customer). */

import { integer, requestSchema, text } from '../shared/schemas';
import * as z from '../shared/zod';

export const RegisterCustomer = requestSchema(
  z.strictObject({
    name: text(200),
    email: z.email().check(z.maxLength(254)),
    creditLimitCents: z.optional(integer(0)).check(
      z.meta({
        description: 'default 100000 ($1,000.00); only an admin token may set it (else `403 FORBIDDEN`)',
      }),
    ),
    ownerSub: z.optional(z.string().check(z.minLength(1), z.maxLength(256))).check(
      z.meta({
        description:
          'the `sub` the record will belong to; only an admin token may set it (else `403 FORBIDDEN`). A shop token registers its own `sub`; an admin’s customer without it belongs to no shop caller.',
      }),
    ),
  }),
  {
    id: 'RegisterCustomer',
    examples: [{ name: 'Ada', email: 'ada@example.com', creditLimitCents: 500000 }],
  },
);
