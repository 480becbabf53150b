/** The accounts module's request bodies: what its handlers validate (registering a customer). */

import { integer, requestSchema, text } from '../shared/schemas';
import * as z from '../shared/zod';

/**
 * An address as the document's `email` format has it (RFC 5321, as JSON Schema
 * validators check it): zod's pattern for the local part, and a domain whose
 * labels are at most 63 characters and neither begin nor end with a hyphen (zod's
 * own pattern took `a@h-.com`). The local part's bound, 64 characters, is a
 * check of its own: a pattern could only count it with a lookahead, which the
 * fuzzer's generator does not take.
 */
const EMAIL =
  /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const LOCAL_PART_MAX = 64;

export const RegisterCustomer = requestSchema(
  z.strictObject({
    name: text(200),
    email: z.email({ pattern: EMAIL }).check(
      z.maxLength(254),
      z.refine((email) => email.indexOf('@') <= LOCAL_PART_MAX, {
        message: `Invalid email address: its part before the @ is longer than ${LOCAL_PART_MAX} characters`,
      }),
    ),
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
