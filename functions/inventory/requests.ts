/** The inventory module's request bodies: what its handlers validate (creating a product, reserving and restocking its stock). */

import { integer, requestSchema, text } from '../shared/schemas';
import * as z from '../shared/zod';

export const CreateProduct = requestSchema(
  z.strictObject({
    sku: text(64),
    name: text(200),
    priceCents: integer(1),
    stock: integer(0, 1_000_000_000).check(z.meta({ description: 'units received at creation' })),
  }),
  { id: 'CreateProduct', examples: [{ sku: 'W-1', name: 'Widget', priceCents: 1250, stock: 10 }] },
);

export const ReserveStock = requestSchema(z.strictObject({ quantity: integer(1, 1000) }), {
  id: 'ReserveStock',
  examples: [{ quantity: 3 }],
});

export const Restock = requestSchema(z.strictObject({ quantity: integer(1, 1_000_000_000) }), {
  id: 'Restock',
  examples: [{ quantity: 100 }],
});
