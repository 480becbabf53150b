import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkInvariants } from '../../load/invariants';
import { CloudProcess } from '../../local/cloud-process';
import { checkAnswer } from '../support/contract';

/**
 * A hard crash: the local cloud, run on a data directory as a process group
 * of its own (tsx, the cloud, DynamoDB Local's JVM), killed whole with
 * SIGKILL while sagas are in flight, then started again on the same data.
 * Nothing acknowledged before the kill may be lost, and every order must
 * still end CONFIRMED or CANCELLED within its deadline plus the sweeper's
 * grace (or, for one whose time passed while the cloud was down, soon after
 * it is back), with stock and credit exact and nothing charged twice.
 *
 * Its own cloud, synthesized with a 5 s saga deadline and a 2 s sweeper
 * grace, its scheduled rules (the saga sweeper among them) firing every
 * 500 ms.
 */
const DEADLINE_S = 5;
const GRACE_S = 2;
const SCHEDULE_MS = 500;
/** What a final order may take beyond its due time here: a sweep's own work on a busy 2-core machine. */
const SLACK_MS = 4_000;
const ORDER_PLACED = 'commerce.orders OrderPlaced';

let cloud: CloudProcess;
let dataDir: string;

interface Order {
  orderId: string;
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED';
  cancellationReason?: string;
  paymentId?: string;
  items: { productId: string; quantity: number }[];
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
  const r = await fetch(`${cloud.apiUrl}${path}`, {
    method,
    ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
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
    args: [
      '--assembly-dir',
      join(__dirname, '..', '..', 'local', '.cache', 'assembly-crash'),
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
  await cloud?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a SIGKILL of the whole cloud mid-run loses nothing acknowledged, and the restart on its data settles every order', async () => {
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

  // A: orders that end before the crash.
  const settled = await place(6);
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

  // B: orders whose sagas are in flight at the crash: stock reserved, then held up before the payment
  // or the confirmation by a delay longer than the kill is away.
  await admin('/_local/faults', [
    { state: 'CapturePayment', rate: 0.5, delayMs: 4_000 },
    { state: 'ConfirmOrder', rate: 1, delayMs: 4_000 },
  ]);
  const inFlight = await place(6);
  expect(
    await waitFor(async () => {
      const traces = await Promise.all(
        inFlight.map(
          async (o) =>
            (await call<{ steps: { name: string; status: string }[] }>('GET', `/orders/${o.orderId}/saga`))
              .body,
        ),
      );
      return traces.every((t) => t.steps.some((s) => s.name === 'ReserveStock' && s.status === 'SUCCEEDED'));
    }, 15_000),
  ).toBe(true);
  // The outbox relay has published every OrderPlaced so far (A and B) before the last orders go in.
  expect(
    await waitFor(
      async () => ((await admin<Stats>('/_local/stats')).eventBridge.byType[ORDER_PLACED] ?? 0) >= 12,
      15_000,
    ),
  ).toBe(true);

  // C: orders acknowledged just before the kill (their sagas and OrderPlaced records are wherever they are).
  const lastMoment = await place(3);
  await cloud.crash();
  expect(cloud.running).toBe(false);

  await cloud.restart();
  const restartedAt = Date.now();

  // Nothing acknowledged is lost: every customer, product and order, as acknowledged.
  for (const c of customers) expect((await call('GET', `/customers/${c.customerId}`)).status).toBe(200);
  for (const p of products) expect((await call('GET', `/products/${p.productId}`)).status).toBe(200);
  for (const line of placed) {
    const o = await order(line.orderId);
    expect(o.items.map(({ productId, quantity }) => ({ productId, quantity }))).toEqual(line.items);
  }
  // What was final stays final, as it was.
  for (const [orderId, status] of settledBefore) expect((await order(orderId)).status).toBe(status);

  // Every order final within its deadline plus the sweeper's grace, or, for one whose time passed while
  // the cloud was down, once the sweeper runs again after the restart.
  const finalAt = new Map<string, number>();
  await waitFor(
    async () => {
      await Promise.all(
        placed
          .filter((o) => !finalAt.has(o.orderId))
          .map(async (o) => {
            if ((await order(o.orderId)).status !== 'PENDING') finalAt.set(o.orderId, Date.now());
          }),
      );
      return finalAt.size === placed.length;
    },
    (DEADLINE_S + GRACE_S) * 1000 + SLACK_MS * 3,
  );
  const late = placed.flatMap((o) => {
    const due = Math.max(o.placedAt + (DEADLINE_S + GRACE_S) * 1000, restartedAt) + SCHEDULE_MS + SLACK_MS;
    const at = finalAt.get(o.orderId);
    return at !== undefined && at <= due
      ? []
      : [`${o.orderId}: ${at === undefined ? 'still PENDING' : `final ${at - due} ms after it was due`}`];
  });
  expect(late).toEqual([]);
  // The executions in flight died with the cloud; the sweeper cancelled their orders (and undid their work).
  for (const o of inFlight) {
    const final = await order(o.orderId);
    expect([final.status, final.cancellationReason]).toEqual(['CANCELLED', 'TIMEOUT']);
  }

  // The relay resumed after what it had handled: at most C's OrderPlaced are published again, not the
  // stream from its start (A's and B's twelve).
  const afterRestart = await admin<Stats>('/_local/stats');
  expect(afterRestart.eventBridge.byType[ORDER_PLACED] ?? 0).toBeLessThanOrEqual(lastMoment.length);

  // Payments agree with the orders, credit and stock are exact (each read model re-read until it settles).
  const report = await checkInvariants({ api: cloud.apiUrl }, seed, baseline, placed, {
    sagaDeadlineSeconds: DEADLINE_S,
    finalGraceSeconds: GRACE_S,
    settleSeconds: 20,
  });
  expect(report.checks.flatMap((c) => c.violations)).toEqual([]);
  expect(report.orders.placed).toBe(15);
  // Nothing went to a dead-letter queue, in either life (the queues are kept in the data directory).
  expect(Object.values(afterRestart.deadLetters).filter((depth) => depth > 0)).toEqual([]);

  // And the cloud goes on working on the same data: a new order confirms.
  const next = await place(1);
  expect(await waitFor(async () => (await order(next[0]!.orderId)).status === 'CONFIRMED', 15_000)).toBe(
    true,
  );
}, 240_000);
