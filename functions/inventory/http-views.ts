import type { Product, Reservation, Stock } from './domain';

/** A product as `GET /products/{id}` answers it: its stock summed over its shards. */
export const productView = (p: Product, stock: Stock) => ({
  productId: p.productId,
  sku: p.sku,
  name: p.name,
  priceCents: p.priceCents,
  available: stock.available,
  reserved: stock.reserved,
  sold: stock.sold,
  createdAt: p.createdAt,
});

/** A reservation as `POST /products/{id}/reservations` answers it. */
export const reservationView = (r: Reservation) => ({
  reservationId: r.reservationId,
  productId: r.productId,
  quantity: r.quantity,
  status: r.status,
  expiresAt: r.expiresAt,
});
