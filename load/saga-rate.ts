/**
 * A benchmark, not a test: the order saga at fixed arrival rates. For each
 * rate, orders are placed open-loop (on schedule, whatever the answers) for
 * DURATION seconds; each is polled every POLL_MS (default 50) until final. Prints the saga's
 * end-to-end latency as a polling client sees it, and — from the local
 * cloud's counters — what one saga costs: Lambda invocations, state
 * transitions, DynamoDB reads and item writes, events put on the bus.
 *
 *   API_URL (default http://127.0.0.1:3000), AWS_ENDPOINT (required), RATES (default 10,50), DURATION (default 20)
 */
import { call, machine, percentile } from './bench';

const AWS = process.env.AWS_ENDPOINT;
const RATES = (process.env.RATES ?? '10,50').split(',').map(Number);
const DURATION = Number(process.env.DURATION ?? 20);
// A client polling faster than this adds more load than the sagas themselves at 50/s.
const POLL_MS = Number(process.env.POLL_MS ?? 50);

const admin = async <T>(path: string) => (await (await fetch(`${AWS}/_local/${path}`)).json()) as T;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

interface Stats {
  invocations: Record<string, { count: number }>;
  reads: Record<string, Record<string, number>>;
  writes: Record<string, { itemWrites: number }>;
  eventBridge: { events: number };
  stepFunctions: { executions: number; stateTransitions: number; taskInvocations: number };
}

async function runRate(rate: number, customerIds: string[], productIds: string[]) {
  await admin('reset-stats');
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  const pending: Promise<void>[] = [];
  const total = rate * DURATION;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      (async () => {
        const t0 = performance.now();
        const placed = await call('POST', '/orders', {
          customerId: customerIds[i % customerIds.length],
          items: [{ productId: productIds[i % productIds.length], quantity: 1 }],
        });
        for (;;) {
          const order = (await call('GET', `/orders/${placed.body.orderId}`)).body;
          if (order.status !== 'PENDING') {
            latencies.push(performance.now() - t0);
            const key = `${order.status}${order.cancellationReason ? ` ${order.cancellationReason}` : ''}`;
            outcomes[key] = (outcomes[key] ?? 0) + 1;
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
      })(),
    );
  }
  const placedIn = (performance.now() - started) / 1000;
  await Promise.all(pending);
  const stats = await admin<Stats>('stats');
  const sagas = stats.stepFunctions.executions || 1;
  const sorted = latencies.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(0);
  console.log(
    `\n${rate} orders/s for ${DURATION} s: ${total} orders placed in ${placedIn.toFixed(1)} s (${(total / placedIn).toFixed(1)}/s)`,
  );
  console.log(`  outcomes: ${JSON.stringify(outcomes)}`);
  console.log(
    `  saga end to end (placed → final seen): p50 ${f(percentile(sorted, 50))}  p95 ${f(percentile(sorted, 95))}  p99 ${f(percentile(sorted, 99))}  max ${f(sorted.at(-1)!)} ms`,
  );
  const invocations = sum(Object.values(stats.invocations).map((i) => i.count));
  const reads = sum(Object.values(stats.reads).flatMap((t) => Object.values(t)));
  const writes = sum(Object.values(stats.writes).map((t) => t.itemWrites));
  console.log(
    `  per saga (the whole platform, polling GETs included): ` +
      `state transitions ${(stats.stepFunctions.stateTransitions / sagas).toFixed(1)}, ` +
      `task invocations ${(stats.stepFunctions.taskInvocations / sagas).toFixed(1)}, ` +
      `Lambda invocations ${(invocations / sagas).toFixed(1)}, ` +
      `DynamoDB read calls ${(reads / sagas).toFixed(1)}, item writes ${(writes / sagas).toFixed(1)}, ` +
      `events put ${(stats.eventBridge.events / sagas).toFixed(1)}`,
  );
  console.log(
    `  Lambda invocations by function: ${Object.entries(stats.invocations)
      .map(([fn, i]) => `${fn.replace(/Function[0-9A-F]+$/, '')} ${(i.count / sagas).toFixed(2)}`)
      .join(', ')}`,
  );
}

async function main() {
  if (!AWS) throw new Error('set AWS_ENDPOINT to the local cloud’s AWS endpoint (printed by npm start)');
  console.log(machine());
  // Enough stock and credit that every order can be confirmed: the saga's happy path is what is measured.
  const created = async (path: string, body: unknown) => {
    const r = await call('POST', path, body);
    if (r.status !== 201)
      throw new Error(`setup failed: POST ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const customerIds: string[] = [];
  const productIds: string[] = [];
  for (let i = 0; i < 50; i++) {
    customerIds.push(
      String(
        (await created('/customers', { name: 'Bench', email: 'bench@example.com', creditLimitCents: 1e12 }))
          .customerId,
      ),
    );
    productIds.push(
      String(
        (await created('/products', { sku: `SAGA-${i}`, name: 'Bench', priceCents: 100, stock: 1_000 }))
          .productId,
      ),
    );
  }
  for (const rate of RATES) await runRate(rate, customerIds, productIds);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
