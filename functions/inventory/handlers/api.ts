import { fromEnvironment } from '../../shared/aws';
import { ClientError, insufficientStock, notFound, throttled } from '../../shared/errors';
import { type HttpRequest, httpHandler, json, requireBody, validate } from '../../shared/http';
import { idempotentCreation } from '../../shared/idempotency';
import { idempotentCommand } from '../../shared/idempotent-command';
import { isId } from '../../shared/ids';
import { type InventoryRejection, inventoryCommands, type Outcome, type ProductStock } from '../application';
import type { Reservation } from '../domain';
import { productView, reservationView } from '../http-views';
import { productReads } from '../reads';
import { CreateProduct, ReserveStock, Restock } from '../requests';
import { INVENTORY_ROUTES, inventoryViewsEnvironment } from '../seams';
import { inventorySettings } from '../settings';
import { inventoryStores } from '../store';

const stores = inventoryStores();
const commands = inventoryCommands(stores, inventorySettings());
const reads = productReads(stores, fromEnvironment(inventoryViewsEnvironment).viewsTable);

/** The contract's error for each refusal of the inventory's use cases. */
function refusal(rejection: InventoryRejection): ClientError {
  switch (rejection.code) {
    case 'NO_SUCH_PRODUCT':
      return notFound('product', rejection.productId);
    case 'NO_SUCH_RESERVATION':
      return notFound('reservation', rejection.reservationId);
    case 'INSUFFICIENT_STOCK':
      return insufficientStock(rejection.productId, rejection.requested, rejection.available);
    case 'CONTENDED':
      return throttled('too many concurrent reservations of this product; retry');
    case 'RESERVATION_COMMITTED':
      return new ClientError(
        409,
        'RESERVATION_COMMITTED',
        `reservation ${rejection.reservationId} was sold with its order`,
      );
    case 'HOLD_LIMIT_REACHED': {
      const { productId, requested, held, limit } = rejection;
      return new ClientError(
        409,
        'HOLD_LIMIT_REACHED',
        `the caller holds ${held} of product ${productId}; ${requested} more would pass the limit of ${limit}`,
        [{ productId, requested, held, limit }],
      );
    }
  }
}

/** The result of a use case, or its refusal thrown as the contract's error. */
function answered<T>(outcome: Outcome<T>): T {
  if ('rejection' in outcome) throw refusal(outcome.rejection);
  return outcome.ok;
}

const productIdOf = ({ pathParameters }: HttpRequest) => {
  const id = pathParameters.productId;
  if (!isId('prd', id)) throw notFound('product', String(id));
  return id;
};

const meta = (request: HttpRequest) => ({ now: request.now, correlationId: request.correlationId });

const shown = ({ product, stock }: ProductStock) => productView(product, stock);

const created = (product: ReturnType<typeof productView>) =>
  json(201, product, { location: `/products/${product.productId}` });

const reserved = (r: Reservation) =>
  json(201, reservationView(r), { location: `/products/${r.productId}/reservations/${r.reservationId}` });

export const handler = httpHandler(INVENTORY_ROUTES, {
  createProduct: idempotentCreation(
    'prd',
    (request) => validate(CreateProduct, requireBody(request)),
    async (input, request, { id, requestHash }) =>
      created(shown(answered(await commands.create(input, { ...meta(request), requestHash }, id)))),
    async (productId) => {
      const first = await stores.products.first(productId);
      if (!first?.state || first.event.type !== 'ProductCreated') return undefined;
      // At its creation a product's whole stock was available.
      const received = first.event.data.initialStock;
      const stock = { available: received, reserved: 0, sold: 0, received };
      return { requestHash: first.requestHash, result: created(productView(first.state, stock)) };
    },
    stores.products,
  ),

  getProduct: async (request) => {
    const productId = productIdOf(request);
    const read = await reads.read(productId);
    if (!read) throw notFound('product', productId);
    return json(200, shown(read));
  },

  reserveStock: idempotentCreation(
    'res',
    (request) => ({ productId: productIdOf(request), ...validate(ReserveStock, requireBody(request)) }),
    async ({ productId, quantity }, request, { id, requestHash }) =>
      reserved(
        answered(
          await commands.reserveStock(
            productId,
            quantity,
            { ...meta(request), requestHash },
            id,
            request.caller,
          ),
        ),
      ),
    async (reservationId) => {
      const first = await stores.reservations.first(reservationId);
      // A reservation made by this route is never voided (only the saga's were, by earlier versions).
      if (!first?.state || first.state.status === 'VOIDED') return undefined;
      return { requestHash: first.requestHash, result: reserved(first.state) };
    },
    stores.reservations,
    // It holds stock: a retry after a lost answer must find the first reservation, not hold more.
    { keyRequired: true },
  ),

  releaseReservation: async (request) => {
    const productId = productIdOf(request);
    const reservationId = request.pathParameters.reservationId;
    if (!isId('res', reservationId)) throw notFound('reservation', String(reservationId));
    // Another caller's reservation answers exactly as an unknown one.
    answered(
      await commands.releaseReservation(productId, reservationId, 'RELEASED', meta(request), request.caller),
    );
    return json(200, { reservationId, status: 'RELEASED' });
  },

  restockProduct: idempotentCommand(
    (request) => ({ productId: productIdOf(request), ...validate(Restock, requireBody(request)) }),
    async ({ productId, quantity }, request) =>
      json(200, shown(answered(await commands.restockProduct(productId, quantity, meta(request))))),
  ),
});
