import { join } from 'node:path';
import { type LocalProcess, startLocalProcess } from '../support/local-process';

/**
 * Expiry needs reservations that live seconds, not the stage's 15 minutes:
 * this suite runs its own local cloud, synthesized with a 1 s reservation TTL
 * and the sweeper firing every 250 ms.
 */
let cloud: LocalProcess;
const call = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${cloud.apiUrl}${path}`, {
    method,
    ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  cloud = await startLocalProcess([
    '--port',
    '0',
    '--assembly-dir',
    join(__dirname, '..', '..', 'local', '.cache', 'assembly-expiry'),
    '--reservation-ttl-seconds',
    '1',
    '--schedule-interval-ms',
    '250',
  ]);
}, 240_000);
afterAll(() => cloud?.stop());

test('a reservation expires at expiresAt and its stock becomes available again', async () => {
  const product = await call('POST', '/products', {
    sku: 'EXP-1',
    name: 'Expiring',
    priceCents: 100,
    stock: 5,
  });
  const productId = String(product.body.productId);
  const reserved = await call('POST', `/products/${productId}/reservations`, { quantity: 4 });
  expect(reserved.status).toBe(201);
  const expiresAt = Date.parse(String(reserved.body.expiresAt));
  expect(expiresAt - Date.now()).toBeLessThanOrEqual(1_000);

  let view = (await call('GET', `/products/${productId}`)).body;
  const deadline = Date.now() + 10_000;
  while (view.available !== 5 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    view = (await call('GET', `/products/${productId}`)).body;
  }
  expect(view).toMatchObject({ available: 5, reserved: 0, sold: 0 });
  // It was not given back before its time.
  expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);

  // Releasing an expired reservation answers as a release and changes nothing.
  const release = await call(
    'DELETE',
    `/products/${productId}/reservations/${String(reserved.body.reservationId)}`,
  );
  expect(release).toEqual({
    status: 200,
    body: { reservationId: reserved.body.reservationId, status: 'RELEASED' },
  });
  expect((await call('GET', `/products/${productId}`)).body).toMatchObject({ available: 5, reserved: 0 });
});
