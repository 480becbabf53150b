// The inventory's use cases on the in-memory event store: what each answers
// (results and typed refusals, never HTTP errors) and what it reads.
import { AlreadyCreated } from '../../functions/shared/errors';
import { inMemoryCommerce, succeeded, T0 } from '../support/in-memory-commerce';

const meta = { now: T0, correlationId: 'corr-1' };
const UNKNOWN_PRODUCT = 'prd_ffffffffffffffffffffffffffffffff';

describe('products', () => {
  it('creates a product with its stock spread over shards, and restocks it', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(250);
    expect(product.shardCount).toBe(3);
    expect(await c.stock(product.productId)).toMatchObject({ available: 250, reserved: 0, sold: 0 });
    const restocked = succeeded(await c.inventory.restockProduct(product.productId, 50, meta));
    expect(restocked.stock).toMatchObject({ available: 300, received: 300 });
  });

  it('refuses an unknown product, by code', async () => {
    const c = inMemoryCommerce();
    const refused = { rejection: { code: 'NO_SUCH_PRODUCT', productId: UNKNOWN_PRODUCT } };
    expect(await c.inventory.view(UNKNOWN_PRODUCT)).toEqual(refused);
    expect(await c.inventory.restockProduct(UNKNOWN_PRODUCT, 1, meta)).toEqual(refused);
    expect(await c.inventory.reserveStock(UNKNOWN_PRODUCT, 1, meta)).toEqual(refused);
  });
});

describe('reservations', () => {
  it('reserves from one shard, and a repeat under the same id is AlreadyCreated', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(10);
    const reservation = succeeded(await c.inventory.reserveStock(product.productId, 3, meta, 'res_1'));
    expect(reservation).toMatchObject({
      reservationId: 'res_1',
      quantity: 3,
      status: 'RESERVED',
      parts: [{ shard: 0, quantity: 3 }],
    });
    expect(await c.stock(product.productId)).toMatchObject({ available: 7, reserved: 3 });
    await expect(c.inventory.reserveStock(product.productId, 3, meta, 'res_1')).rejects.toBeInstanceOf(
      AlreadyCreated,
    );
  });

  it('short of stock: refused with what is available; then refused again with no read at all', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(2);
    const refused = {
      rejection: { code: 'INSUFFICIENT_STOCK', productId: product.productId, requested: 3, available: 2 },
    };
    expect(await c.inventory.reserveStock(product.productId, 3, meta)).toEqual(refused);
    const reads = c.events.calls.newest;
    expect(await c.inventory.reserveStock(product.productId, 3, meta)).toEqual(refused);
    expect(c.events.calls.newest).toBe(reads);
  });

  it('spreads a reservation no one shard holds over several', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(250);
    const reservation = succeeded(await c.inventory.reserveStock(product.productId, 200, meta));
    expect(reservation.parts.length).toBeGreaterThan(1);
    expect(reservation.parts.reduce((n, p) => n + p.quantity, 0)).toBe(200);
    expect(await c.stock(product.productId)).toMatchObject({ available: 50, reserved: 200 });
  });

  it('releases a held reservation once; a repeat changes nothing', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(10);
    const { reservationId } = succeeded(await c.inventory.reserveStock(product.productId, 4, meta));
    expect(await c.inventory.releaseReservation(product.productId, reservationId, 'RELEASED', meta)).toEqual({
      ok: { changed: true },
    });
    expect(await c.inventory.releaseReservation(product.productId, reservationId, 'RELEASED', meta)).toEqual({
      ok: { changed: false },
    });
    expect(await c.stock(product.productId)).toMatchObject({ available: 10, reserved: 0 });
  });

  it('refuses a reservation of another product, or none', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(10);
    const { reservationId } = succeeded(await c.inventory.reserveStock(product.productId, 1, meta));
    const refused = { rejection: { code: 'NO_SUCH_RESERVATION', reservationId } };
    expect(await c.inventory.releaseReservation(UNKNOWN_PRODUCT, reservationId, 'RELEASED', meta)).toEqual(
      refused,
    );
    expect(await c.inventory.releaseReservation(undefined, 'res_none', 'EXPIRED', meta)).toEqual({
      rejection: { code: 'NO_SUCH_RESERVATION', reservationId: 'res_none' },
    });
  });

  it('expires a reservation only once its time is up', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(10);
    const { reservationId, expiresAt } = succeeded(
      await c.inventory.reserveStock(product.productId, 4, meta),
    );
    expect(await c.inventory.releaseReservation(undefined, reservationId, 'EXPIRED', meta)).toEqual({
      ok: { changed: false },
    });
    const later = { now: new Date(Date.parse(expiresAt) + 1) };
    expect(await c.inventory.releaseReservation(undefined, reservationId, 'EXPIRED', later)).toEqual({
      ok: { changed: true },
    });
    expect(await c.stock(product.productId)).toMatchObject({ available: 10, reserved: 0 });
  });

  it('concurrent reservations of one product never oversell', async () => {
    const c = inMemoryCommerce();
    const product = await c.product(20);
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, () => c.inventory.reserveStock(product.productId, 1, meta)),
    );
    const made = outcomes.filter((o) => 'ok' in o).length;
    expect(made).toBeLessThanOrEqual(20);
    for (const o of outcomes)
      if ('rejection' in o) expect(['INSUFFICIENT_STOCK', 'CONTENDED']).toContain(o.rejection.code);
    expect(await c.stock(product.productId)).toMatchObject({ reserved: made, available: 20 - made });
  });
});
