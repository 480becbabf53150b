/**
 * A benchmark, not a test: per-route latency at a light load (one request at
 * a time), the lag from a write to its read model, and the order saga's
 * end-to-end time as a polling client sees it. Run against a running local
 * cloud: `npm start` in one shell, `npm run bench:light` in another.
 *
 *   API_URL (default http://127.0.0.1:3000), AWS_ENDPOINT (the local cloud's AWS endpoint, for the lag),
 *   SAMPLES (default 200)
 */

import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { API, call, machine, percentile } from './bench';

const SAMPLES = Number(process.env.SAMPLES ?? 200);

const summary = (samples: number[]) => {
  const s = [...samples].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1);
  return `p50 ${f(percentile(s, 50))}  p95 ${f(percentile(s, 95))}  p99 ${f(percentile(s, 99))}  max ${f(s.at(-1)!)} ms  (n=${s.length})`;
};

async function timed(samples: number, fn: (i: number) => Promise<unknown>) {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await fn(i);
    out.push(performance.now() - start);
  }
  return out;
}

async function main() {
  console.log(machine());
  console.log(`target: ${API}, ${SAMPLES} sequential requests per route\n`);
  const customer = (
    await call('POST', '/customers', { name: 'Bench', email: 'bench@example.com', creditLimitCents: 1e12 })
  ).body;
  const product = (
    await call('POST', '/products', { sku: 'BENCH', name: 'Bench', priceCents: 100, stock: 1_000_000 })
  ).body;
  const customerId = String(customer.customerId);
  const productId = String(product.productId);
  const reservations: string[] = [];
  const orders: string[] = [];

  const routes: [string, (i: number) => Promise<unknown>][] = [
    ['POST /customers', () => call('POST', '/customers', { name: 'B', email: 'b@example.com' })],
    ['GET /customers/{id}', () => call('GET', `/customers/${customerId}`)],
    [
      'POST /products',
      (i) => call('POST', '/products', { sku: `B-${i}`, name: 'B', priceCents: 100, stock: 10 }),
    ],
    ['GET /products/{id}', () => call('GET', `/products/${productId}`)],
    [
      'POST /products/{id}/reservations',
      async () =>
        reservations.push(
          String(
            (await call('POST', `/products/${productId}/reservations`, { quantity: 1 })).body.reservationId,
          ),
        ),
    ],
    [
      'DELETE /products/{id}/reservations/{rid}',
      (i) => call('DELETE', `/products/${productId}/reservations/${reservations[i]}`),
    ],
    ['POST /products/{id}/restock', () => call('POST', `/products/${productId}/restock`, { quantity: 1 })],
    [
      'POST /orders',
      async () =>
        orders.push(
          String(
            (await call('POST', '/orders', { customerId, items: [{ productId, quantity: 1 }] })).body.orderId,
          ),
        ),
    ],
    ['GET /orders/{id}', (i) => call('GET', `/orders/${orders[i]}`)],
  ];
  for (const [name, fn] of routes) console.log(`${name.padEnd(42)} ${summary(await timed(SAMPLES, fn))}`);

  // Saga end to end: placed → final status seen by a client polling every 5 ms.
  const saga = await timed(Math.min(SAMPLES, 100), async () => {
    const placed = (await call('POST', '/orders', { customerId, items: [{ productId, quantity: 1 }] })).body;
    for (;;) {
      const order = (await call('GET', `/orders/${placed.orderId}`)).body;
      if (order.status !== 'PENDING') return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  console.log(`${'saga end to end (placed → final, polled)'.padEnd(42)} ${summary(saga)}`);

  if (process.env.AWS_ENDPOINT) {
    // Write → read model: register a customer, then read its view item directly until it appears.
    const dynamo = new DynamoDBClient({
      endpoint: process.env.AWS_ENDPOINT,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const wiring = (await (await fetch(`${process.env.AWS_ENDPOINT}/_local/wiring`)).json()) as {
      tables: string[];
    };
    const views = wiring.tables.find((t) => t.startsWith('AccountsViews'))!;
    const lags: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const created = (await call('POST', '/customers', { name: 'Lag', email: 'lag@example.com' })).body;
      const written = performance.now();
      for (;;) {
        const item = await dynamo.send(
          new GetItemCommand({
            TableName: views,
            Key: { id: { S: String(created.customerId) } },
            ConsistentRead: true,
          }),
        );
        if (item.Item) break;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      lags.push(performance.now() - written);
    }
    console.log(`${'write → read model lag (accounts)'.padEnd(42)} ${summary(lags)}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
