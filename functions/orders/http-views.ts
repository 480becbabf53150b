import type { Order } from './domain';

/** An order as `GET /orders/{id}` answers it. */
export const orderView = (o: Order) => ({
  orderId: o.orderId,
  customerId: o.customerId,
  items: o.items,
  totalCents: o.totalCents,
  status: o.status,
  ...(o.status === 'CANCELLED' ? { cancellationReason: o.cancellationReason } : {}),
  ...(o.status !== 'PENDING' && o.paymentId ? { paymentId: o.paymentId } : {}),
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
});

/** The answer to a placed order: accepted, its saga under way. */
export const acceptedOrderView = (o: Order) => ({
  orderId: o.orderId,
  status: o.status,
  totalCents: o.totalCents,
});
