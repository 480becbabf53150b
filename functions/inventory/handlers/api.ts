import { z } from 'zod';
import { env } from '../../shared/aws';
import { notFound } from '../../shared/errors';
import { type HttpRequest, httpHandler, integer, json, requireBody, validate } from '../../shared/http';
import { idempotentCommand } from '../../shared/idempotency';
import { isId } from '../../shared/ids';
import { inventoryCommands } from '../commands';
import { productReads } from '../reads';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';

const stores = inventoryStores();
const commands = inventoryCommands(stores, inventorySettings());
const reads = productReads(stores, env('VIEWS_TABLE'));

const CreateProduct = z.strictObject({
  sku: z.string().trim().min(1).max(64),
  name: z.string().trim().min(1).max(200),
  priceCents: integer(1),
  stock: integer(0, 1_000_000_000),
});
const Quantity = z.strictObject({ quantity: integer(1, 1000) });
const Restock = z.strictObject({ quantity: integer(1, 1_000_000_000) });

const productIdOf = ({ pathParameters }: HttpRequest) => {
  const id = pathParameters.productId;
  if (!isId('prd', id)) throw notFound('product', String(id));
  return id;
};

const meta = (request: HttpRequest) => ({ now: request.now, correlationId: request.correlationId });

export const handler = httpHandler({
  'POST /products': idempotentCommand(
    (request) => validate(CreateProduct, requireBody(request)),
    async (input, request) => {
      const product = await commands.create(input, meta(request));
      return json(201, product, { location: `/products/${product.productId}` });
    },
  ),

  'GET /products/{productId}': async (request) => json(200, await reads.read(productIdOf(request))),

  'POST /products/{productId}/reservations': idempotentCommand(
    (request) => ({ productId: productIdOf(request), ...validate(Quantity, requireBody(request)) }),
    async ({ productId, quantity }, request) => {
      const r = await commands.reserveStock(productId, quantity, meta(request));
      return json(
        201,
        {
          reservationId: r.reservationId,
          productId,
          quantity: r.quantity,
          status: r.status,
          expiresAt: r.expiresAt,
        },
        { location: `/products/${productId}/reservations/${r.reservationId}` },
      );
    },
  ),

  'DELETE /products/{productId}/reservations/{reservationId}': async (request) => {
    const productId = productIdOf(request);
    const reservationId = request.pathParameters.reservationId;
    if (!isId('res', reservationId)) throw notFound('reservation', String(reservationId));
    await commands.releaseReservation(productId, reservationId, 'RELEASED', meta(request));
    return json(200, { reservationId, status: 'RELEASED' });
  },

  'POST /products/{productId}/restock': idempotentCommand(
    (request) => ({ productId: productIdOf(request), ...validate(Restock, requireBody(request)) }),
    async ({ productId, quantity }, request) =>
      json(200, await commands.restockProduct(productId, quantity, meta(request))),
  ),
});
