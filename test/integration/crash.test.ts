import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CACHE_DIR, CloudProcess } from '@commerce/local-cloud';
import { checkInvariants } from '../../load/invariants';
import { withDefaults } from '../support/api';
import { checkAnswer } from '../support/contract';

/**
 * A hard crash: the local cloud, run on a data directory as a process group
 * of its own (the cloud and its DynamoDB engine in one process), killed whole
 * with SIGKILL while sagas are in flight, then started again on the same data.
 * Nothing acknowledged before the kill may be lost, and every order must
 * still end CONFIRMED or CANCELLED within its deadline plus the sweeper's
 * grace (or, for one whose time passed while the cloud was down, soon after
 * it is back), with stock and credit exact and nothing charged twice.
 *
 * Its own cloud, synthesized with an 8 s saga deadline and a 2 s sweeper
 * grace, its scheduled rules (the saga sweeper among them) firing every
 * 500 ms.
 */
const DEADLINE_S = 8;
const GRACE_S = 2;
const SCHEDULE_MS = 500;
/**
 * What an order may take to be final beyond its due time here: a sweep's own work and, after the restart,
 * the sweeper's sandbox starting cold (on a 2-core machine under a load average of 30, 5–6 s).
 */
const SLACK_MS = 8_000;
const ORDER_PLACED = 'commerce.orders OrderPlaced';

let cloud: CloudProcess;
let dataDir: string;

interface Order {
  orderId: string;
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED';
  cancellationReason?: string;
  paymentId?: string;
  items: { productId: string; quantity: number }[];
  updatedAt: string;
}
interface Stats {
  eventBridge: { byType: Record<string, number> };
  deadLetters: Record<string, number>;
}
interface Placed {
  orderId: string;
  customerId: string;
  items: { productId: string; quantity: number }[];
  placedAt: number;
  idempotencyKey: string;
}

const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
  // As this cloud's operator (its own issuer), with an Idempotency-Key where the contract requires one.
  const headers = await withDefaults(method, path, {}, cloud.awsEndpoint);
  const r = await fetch(`${cloud.apiUrl}${path}`, {
    method,
    ...(body
      ? { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }
      : { headers }),
  });
  const text = await r.text();
  checkAnswer({ method, path, status: r.status, headers: r.headers, text });
  return { status: r.status, body: JSON.parse(text) as T };
};
const admin = async <T>(path: string, body?: unknown): Promise<T> => {
  const r = await fetch(`${cloud.awsEndpoint}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await r.json()) as T;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** When each phase ended, in seconds since the test began: printed at the end, to see where the time goes. */
const timeline: string[] = [];
let began = Date.now();
const mark = (phase: string) => timeline.push(`${phase} ${((Date.now() - began) / 1000).toFixed(1)} s`);

/** Polls until `done` holds, for `ms` at most; returns whether it did. */
async function waitFor(done: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() > until) return false;
    await sleep(250);
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'local-cloud-crash-'));
  cloud = await CloudProcess.start({
    dataDir,
    // CRASH_TEST_ECHO=1 prints what the cloud prints, both lives of it.
    ...(process.env.CRASH_TEST_ECHO
      ? { onOutput: (line: string) => process.stdout.write(`  | ${line}\n`) }
      : {}),
    args: [
      '--assembly-dir',
      join(CACHE_DIR, 'assembly-crash'),
      '--saga-deadline-seconds',
      String(DEADLINE_S),
      '--sweeper-grace-seconds',
      String(GRACE_S),
      '--schedule-interval-ms',
      String(SCHEDULE_MS),
    ],
  });
}, 300_000);
afterAll(async () => {
  process.stdout.write(`crash test: ${timeline.join(', ')}\n`);
  await cloud?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a SIGKILL of the whole cloud mid-run loses nothing acknowledged, and the restart on its data settles every order', async () => {
  began = Date.now();
  // Seed: what the invariants compare against.
  const customers = await Promise.all(
    [0, 1].map(async (i) => {
      const r = await call<{ customerId: string; creditLimitCents: number }>('POST', '/customers', {
        name: `Crash ${i}`,
        email: `crash${i}@example.com`,
        creditLimitCents: 1_000_000,
      });
      expect(r.status).toBe(201);
      return { customerId: r.body.customerId, creditLimitCents: r.body.creditLimitCents };
    }),
  );
  const products = await Promise.all(
    [700, 1100, 1300].map(async (priceCents, i) => {
      const r = await call<{ productId: string }>('POST', '/products', {
        sku: `CRASH-${i}`,
        name: `Crash ${i}`,
        priceCents,
        stock: 100,
      });
      expect(r.status).toBe(201);
      return { productId: r.body.productId, priceCents, stock: 100 };
    }),
  );
  const seed = { target: cloud.apiUrl, createdAt: new Date().toISOString(), customers, products };
  const baseline = {
    availableCredit: new Map(customers.map((c) => [c.customerId, c.creditLimitCents])),
    sold: new Map(products.map((p) => [p.productId, 0])),
  };

  const placed: Placed[] = [];
  const place = async (count: number): Promise<Placed[]> =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const n = placed.length;
        const customerId = customers[n % customers.length]!.customerId;
        const items = [
          { productId: products[n % products.length]!.productId, quantity: 1 + (n % 3) },
          ...(n % 2 === 0
            ? [{ productId: products[(n + 1) % products.length]!.productId, quantity: 1 }]
            : []),
        ];
        const placedAt = Date.now();
        placed.push(undefined as unknown as Placed);
        const r = await call<{ orderId: string }>('POST', '/orders', { customerId, items });
        expect(r.status).toBe(202);
        const line = { orderId: r.body.orderId, customerId, items, placedAt, idempotencyKey: `crash-${n}` };
        placed[n] = line;
        return line;
      }),
    );
  const order = async (orderId: string) => (await call<Order>('GET', `/orders/${orderId}`)).body;

  mark('seeded');
  // A: orders that end before the crash.
  const settled = await place(4);
  expect(
    await waitFor(
      async () =>
        (await Promise.all(settled.map((o) => order(o.orderId)))).every((o) => o.status !== 'PENDING'),
      30_000,
    ),
  ).toBe(true);
  const settledBefore = new Map(
    await Promise.all(settled.map(async (o) => [o.orderId, (await order(o.orderId)).status] as const)),
  );

  mark('A final');
  // B: orders whose sagas are in flight at the crash: stock reserved, then held up before the payment
  // or the confirmation by a delay longer than the kill is away.
  await admin('/_local/faults', [
    { state: 'CapturePayment', rate: 0.5, delayMs: 4_000 },
    { state: 'ConfirmOrder', rate: 1, delayMs: 4_000 },
  ]);
  const inFlight = await place(4);
  expect(
    await waitFor(async () => {
      const traces = await Promise.all(
        inFlight.map(
          async (o) =>
            (await call<{ steps?: { name: string; status: string }[] }>('GET', `/orders/${o.orderId}/saga`))
              .body,
        ),
      );
      return traces.every((t) => t.steps?.some((s) => s.name === 'ReserveStock' && s.status === 'SUCCEEDED'));
    }, 15_000),
  ).toBe(true);
  // The outbox relay has published every OrderPlaced so far (A and B) before the last orders go in.
  expect(
    await waitFor(
      async () => ((await admin<Stats>('/_local/stats')).eventBridge.byType[ORDER_PLACED] ?? 0) >= 8,
      15_000,
    ),
  ).toBe(true);

  mark('B in flight');
  // C: orders acknowledged just before the kill (their sagas and OrderPlaced records are wherever they are).
  const lastMoment = await place(2);
  await cloud.crash();
  expect(cloud.running).toBe(false);

  mark('killed');
  await cloud.restart();
  const restartedAt = Date.now();
  mark('restarted');

  // Every order final within its deadline plus the sweeper's grace, or, for one whose time passed while
  // the cloud was down, once the sweeper runs again after the restart: when it became final is its
  // final event's time (`updatedAt`), whenever this test reads it.
  const finals = new Map<string, Order>();
  await waitFor(
    async () => {
      await Promise.all(
        placed
          .filter((o) => !finals.has(o.orderId))
          .map(async (o) => {
            const current = await order(o.orderId);
            if (current.status !== 'PENDING') finals.set(o.orderId, current);
          }),
      );
      return finals.size === placed.length;
    },
    (DEADLINE_S + GRACE_S) * 1000 + SLACK_MS * 3,
  );
  const late = placed.flatMap((o) => {
    const due = Math.max(o.placedAt + (DEADLINE_S + GRACE_S) * 1000, restartedAt) + SCHEDULE_MS + SLACK_MS;
    const final = finals.get(o.orderId);
    const at = final ? Date.parse(final.updatedAt) : undefined;
    return at !== undefined && at <= due
      ? []
      : [`${o.orderId}: ${at === undefined ? 'still PENDING' : `final ${at - due} ms after it was due`}`];
  });
  mark('all final');
  expect(late).toEqual([]);

  // Nothing acknowledged is lost: every customer, product and order, as acknowledged; what was final
  // before the crash is final as it was.
  const reads = await Promise.all([
    ...customers.map((c) => call('GET', `/customers/${c.customerId}`)),
    ...products.map((p) => call('GET', `/products/${p.productId}`)),
  ]);
  expect(reads.map((r) => r.status)).toEqual(reads.map(() => 200));
  for (const line of placed) {
    expect(
      finals.get(line.orderId)!.items.map(({ productId, quantity }) => ({ productId, quantity })),
    ).toEqual(line.items);
  }
  for (const [orderId, status] of settledBefore) expect(finals.get(orderId)!.status).toBe(status);

  // The executions in flight died with the cloud; the sweeper cancelled their orders (and undid their work).
  for (const o of inFlight) {
    const final = finals.get(o.orderId)!;
    expect([final.status, final.cancellationReason]).toEqual(['CANCELLED', 'TIMEOUT']);
  }

  // The relay resumed after what it had handled: at most C's OrderPlaced are published again, not the
  // stream from its start (A's and B's eight).
  const afterRestart = await admin<Stats>('/_local/stats');
  expect(afterRestart.eventBridge.byType[ORDER_PLACED] ?? 0).toBeLessThanOrEqual(lastMoment.length);

  // Payments agree with the orders, credit and stock are exact (each read model re-read until it settles).
  const report = await checkInvariants(
    { api: cloud.apiUrl, awsEndpoint: cloud.awsEndpoint },
    seed,
    baseline,
    placed,
    {
      sagaDeadlineSeconds: DEADLINE_S,
      finalGraceSeconds: GRACE_S,
      settleSeconds: 20,
    },
  );
  mark('invariants');
  expect(report.checks.flatMap((c) => c.violations)).toEqual([]);
  expect(report.orders.placed).toBe(10);
  // Nothing went to a dead-letter queue, in either life (the queues are kept in the data directory).
  expect(Object.values(afterRestart.deadLetters).filter((depth) => depth > 0)).toEqual([]);

  // And the cloud goes on working on the same data: a new order confirms.
  const next = await place(1);
  expect(await waitFor(async () => (await order(next[0]!.orderId)).status === 'CONFIRMED', 15_000)).toBe(
    true,
  );
}, 240_000);
