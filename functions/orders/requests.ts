/** The orders module's request bodies: what its handlers validate (placing an order). */

import { exampleId, integer, requestSchema } from '../shared/schemas';
import * as z from '../shared/zod';

export const PlaceOrder = requestSchema(
  z.strictObject({
    customerId: z.optional(z.string().check(z.minLength(1), z.maxLength(128))).check(
      z.meta({
        description:
          'omitted: the caller’s own customer. A shop token may name only its own (another’s answers 404, as an unknown id)',
      }),
    ),
    items: z
      .array(
        z.strictObject({
          productId: z.string().check(z.minLength(1), z.maxLength(128)),
          quantity: integer(1, 1000),
        }),
      )
      .check(
        z.minLength(1),
        z.maxLength(25),
        z.superRefine((items, ctx) => {
          const seen = new Set<string>();
          items.forEach((item, i) => {
            if (seen.has(item.productId)) {
              ctx.addIssue({ code: 'custom', path: [i, 'productId'], message: 'productId appears twice' });
            }
            seen.add(item.productId);
          });
        }),
        z.meta({ description: 'distinct `productId`s' }),
      ),
  }),
  {
    id: 'PlaceOrder',
    examples: [{ customerId: exampleId('cus'), items: [{ productId: exampleId('prd'), quantity: 2 }] }],
  },
);
