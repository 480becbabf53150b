import { createProduct, del, eventually, get, post, postRetryingThrottled } from '../support/api';

interface ProductView {
  available: number;
  reserved: number;
  sold: number;
}

describe('reservations', () => {
  test('100 concurrent one-unit reservations against a stock of 10: exactly 10 win', async () => {
    const { productId } = await createProduct({ stock: 10 });
    // A 429 (refused at the edge on a slow machine, nothing changed) is sent again, as a client would.
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        postRetryingThrottled(`/products/${productId}/reservations`, { quantity: 1 }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(90);
    for (const r of results.filter((x) => x.status === 409))
      expect(r.body).toHaveProperty('error.code', 'INSUFFICIENT_STOCK');
    const product = await eventually(
      () => get<ProductView>(`/products/${productId}`),
      (r) => r.body.reserved === 10,
    );
    expect(product.body).toMatchObject({ available: 0, reserved: 10, sold: 0 });
  });

  test('releasing gives the stock back, and repeating it answers the same', async () => {
    const { productId } = await createProduct({ stock: 3 });
    const r = await post<{ reservationId: string }>(`/products/${productId}/reservations`, { quantity: 2 });
    const path = `/products/${productId}/reservations/${r.body.reservationId}`;
    const first = await del(path);
    const second = await del(path);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ reservationId: r.body.reservationId, status: 'RELEASED' });
    expect(second).toMatchObject({ status: 200, body: first.body });
    const product = await eventually(
      () => get<ProductView>(`/products/${productId}`),
      (p) => p.body.available === 3,
    );
    expect(product.body).toMatchObject({ available: 3, reserved: 0 });
  });

  test('restock adds to available and the invariant holds', async () => {
    const { productId } = await createProduct({ stock: 2 });
    const restocked = await post<ProductView>(`/products/${productId}/restock`, { quantity: 5 });
    expect(restocked.status).toBe(200);
    expect(restocked.body).toMatchObject({ available: 7, reserved: 0, sold: 0 });
    expect((await post(`/products/${productId}/reservations`, { quantity: 7 })).status).toBe(201);
    expect((await post(`/products/${productId}/reservations`, { quantity: 1 })).status).toBe(409);
  });
});
