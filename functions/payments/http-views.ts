import type { Payment } from './domain';

/** A payment as `GET /payments/{id}` answers it. */
export const paymentView = (p: Payment) => ({
  paymentId: p.paymentId,
  orderId: p.orderId,
  customerId: p.customerId,
  amountCents: p.amountCents,
  status: p.status,
  createdAt: p.createdAt,
});
