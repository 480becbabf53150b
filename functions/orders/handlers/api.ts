import { z } from 'zod';
import { customers } from '../../accounts/store';
import { inventoryStores } from '../../inventory/store';
import { documents, env } from '../../shared/aws';
import { ClientError, notFound } from '../../shared/errors';
import { AggregateStore } from '../../shared/event-store';
import { httpHandler, integer, json, requireBody, validate } from '../../shared/http';
import { idempotentCommand } from '../../shared/idempotency';
import { isId, newId } from '../../shared/ids';
import { readModel } from '../../shared/views';
import { orderFold, orderView, place } from '../domain';

const orders = new AggregateStore(documents, env('ORDERS_TABLE'), 'Order', orderFold);
const accounts = customers();
const inventory = inventoryStores();
const VIEWS_TABLE = env('VIEWS_TABLE');
const SAGA_DEADLINE_SECONDS = Number(env('SAGA_DEADLINE_SECONDS'));

const PlaceOrder = z.strictObject({
  customerId: z.string().min(1).max(128),
  items: z
    .array(z.strictObject({ productId: z.string().min(1).max(128), quantity: integer(1, 1000) }))
    .min(1)
    .max(25)
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      items.forEach((item, i) => {
        if (seen.has(item.productId)) {
          ctx.addIssue({ code: 'custom', path: [i, 'productId'], message: 'productId appears twice' });
        }
        seen.add(item.productId);
      });
    }),
});

export const handler = httpHandler({
  'POST /orders': idempotentCommand(
    (request) => validate(PlaceOrder, requireBody(request)),
    async (input, { now, correlationId }) => {
      const [customer, ...products] = await Promise.all([
        isId('cus', input.customerId) ? accounts.load(input.customerId).then((l) => l.state) : null,
        ...input.items.map((i) => (isId('prd', i.productId) ? inventory.loadProduct(i.productId) : null)),
      ]);
      const missing = [
        ...(customer ? [] : [{ field: 'customerId', id: input.customerId }]),
        ...input.items.flatMap((item, i) =>
          products[i] ? [] : [{ field: `items.${i}.productId`, id: item.productId }],
        ),
      ];
      if (missing.length > 0) {
        throw new ClientError(404, 'NOT_FOUND', 'the order names an unknown customer or product', missing);
      }
      const prices = new Map(products.map((p) => [p!.productId, p!.priceCents]));
      const orderId = newId('ord');
      const events = place({ orderId, ...input, prices, sagaDeadlineSeconds: SAGA_DEADLINE_SECONDS, now });
      const order = (await orders.append(orderId, 0, events, null, { now, correlationId }))!;
      return json(
        202,
        { orderId, status: order.status, totalCents: order.totalCents },
        { location: `/orders/${orderId}` },
      );
    },
  ),

  'GET /orders/{orderId}': async ({ pathParameters }) => {
    const id = pathParameters.orderId;
    if (!isId('ord', id)) throw notFound('order', String(id));
    const order = await readModel(VIEWS_TABLE, id, async () => {
      const { state } = await orders.load(id);
      return state ? orderView(state) : undefined;
    });
    if (!order) throw notFound('order', id);
    return json(200, order);
  },
});
