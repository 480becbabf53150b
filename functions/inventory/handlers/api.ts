import { fromEnvironment } from '../../shared/aws';
import { notFound } from '../../shared/errors';
import { type HttpRequest, httpHandler, json, requireBody, validate } from '../../shared/http';
import { idempotentCommand, idempotentCreation } from '../../shared/idempotency';
import { isId } from '../../shared/ids';
import { inventoryCommands } from '../commands';
import { CreateProduct, ReserveStock, Restock } from '../contract';
import { productView, type Reservation } from '../domain';
import { productReads } from '../reads';
import { INVENTORY_ROUTES, inventoryViewsEnvironment } from '../seams';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';

const stores = inventoryStores();
const commands = inventoryCommands(stores, inventorySettings());
const reads = productReads(stores, fromEnvironment(inventoryViewsEnvironment).viewsTable);

const productIdOf = ({ pathParameters }: HttpRequest) => {
  const id = pathParameters.productId;
  if (!isId('prd', id)) throw notFound('product', String(id));
  return id;
};

const meta = (request: HttpRequest) => ({ now: request.now, correlationId: request.correlationId });

const created = (product: ReturnType<typeof productView>) =>
  json(201, product, { location: `/products/${product.productId}` });

const reserved = (r: Reservation) =>
  json(
    201,
    {
      reservationId: r.reservationId,
      productId: r.productId,
      quantity: r.quantity,
      status: r.status,
      expiresAt: r.expiresAt,
    },
    { location: `/products/${r.productId}/reservations/${r.reservationId}` },
  );

export const handler = httpHandler(INVENTORY_ROUTES, {
  createProduct: idempotentCreation(
    'prd',
    (request) => validate(CreateProduct, requireBody(request)),
    async (input, request, { id, requestHash }) =>
      created(await commands.create(input, { ...meta(request), requestHash }, id)),
    async (productId) => {
      const first = await stores.products.first(productId);
      if (!first?.state || first.event.type !== 'ProductCreated') return undefined;
      // At its creation a product's whole stock was available.
      const received = first.event.data.initialStock;
      const stock = { available: received, reserved: 0, sold: 0, received };
      return { requestHash: first.requestHash, result: created(productView(first.state, stock)) };
    },
  ),

  getProduct: async (request) => json(200, await reads.read(productIdOf(request))),

  reserveStock: idempotentCreation(
    'res',
    (request) => ({ productId: productIdOf(request), ...validate(ReserveStock, requireBody(request)) }),
    async ({ productId, quantity }, request, { id, requestHash }) =>
      reserved(await commands.reserveStock(productId, quantity, { ...meta(request), requestHash }, id)),
    async (reservationId) => {
      const first = await stores.reservations.first(reservationId);
      return first?.state ? { requestHash: first.requestHash, result: reserved(first.state) } : undefined;
    },
  ),

  releaseReservation: async (request) => {
    const productId = productIdOf(request);
    const reservationId = request.pathParameters.reservationId;
    if (!isId('res', reservationId)) throw notFound('reservation', String(reservationId));
    await commands.releaseReservation(productId, reservationId, 'RELEASED', meta(request));
    return json(200, { reservationId, status: 'RELEASED' });
  },

  restockProduct: idempotentCommand(
    (request) => ({ productId: productIdOf(request), ...validate(Restock, requireBody(request)) }),
    async ({ productId, quantity }, request) =>
      json(200, await commands.restockProduct(productId, quantity, meta(request))),
  ),
});
