import { randomUUID } from 'node:crypto';
import { auditEffects } from '../../load/audit';
import { applyFaults } from '../../load/chaos';
import { type Cell, type CellFaults, chaosMatrix } from '../../load/chaos-matrix';
import { explainDeadLetter, judgeCell } from '../../load/chaos-verdicts';
import { checkInvariants, readBaseline } from '../../load/invariants';
import type { LedgerLine, ReservationLine } from '../../load/processor';
import { redrive } from '../../load/redrive';
import type { Seed } from '../../load/seed';
import type { Target } from '../../load/target';
import {
  apiUrl,
  awsEndpoint,
  createCustomer,
  createProduct,
  eventually,
  get,
  type OrderView,
  post,
  postResending,
  quiescentWrites,
} from '../support/api';

/**
 * The short form of every cell of `npm run chaos` (load/chaos-matrix.ts), on
 * the suite's cloud: the cell's faults in force, a handful of orders at the
 * edges (one that confirms, two contending for a product's last unit, one
 * past its customer's credit) and a reservation, every order final, the
 * fault lifted (and, for a cell that must make dead letters, each explained
 * and redriven), then the load's invariants and the cell's own judgement,
 * exactly as the full run applies them. The crash cell's short form is
 * crash.test.ts, which kills a cloud of its own.
 */

const target = (): Target => ({ api: apiUrl(), awsEndpoint: awsEndpoint() });
type Queues = Record<string, { messageId: string; body: string }[]>;
const deadLetters = async () =>
  Object.entries((await (await fetch(`${awsEndpoint()}/_local/dead-letters`)).json()) as Queues).flatMap(
    ([queue, messages]) => messages.map((m) => ({ queue, messageId: m.messageId, body: m.body })),
  );

const cells = chaosMatrix().filter((cell) => !cell.faults.crash);

/**
 * An order can be final (cancelled by the sweeper at its deadline) while its
 * execution still retries a late step: five attempts of a Task's 10 s timeout
 * and up to 15 s of backoff, then compensation, and a late attempt runs 12 s
 * past its timeout. Quiescence waits that long, not the default 30 s.
 */
const LONGEST_EXECUTION_MS = 120_000;

/**
 * The cell's faults as the short form applies them: a copy delivered minutes
 * late comes here after 20 s, which is still after the short form's orders
 * are final and its reservation taken; the full run waits the minutes.
 */
const shortened = (faults: CellFaults): CellFaults =>
  (faults.duplicates.lateMs ?? 0) > 20_000
    ? { ...faults, duplicates: { ...faults.duplicates, lateMs: 20_000 } }
    : faults;

afterEach(async () => {
  await applyFaults(target(), undefined);
});

async function shortForm(cell: Cell) {
  // The edges: a customer with ample credit and one with less than an order, a product with ample stock and one unit of another.
  const ample = await createCustomer({ creditLimitCents: 100_000 });
  const tight = await createCustomer({ creditLimitCents: 1_500 });
  const stocked = await createProduct({ priceCents: 1_000, stock: 50 });
  const scarce = await createProduct({ priceCents: 500, stock: 1 });
  const seed: Seed = {
    target: apiUrl(),
    createdAt: new Date().toISOString(),
    customers: [ample, tight].map((c) => ({
      customerId: c.customerId,
      creditLimitCents: c.availableCreditCents,
    })),
    products: [stocked, scarce].map((p) => ({
      productId: p.productId,
      priceCents: p.priceCents,
      stock: p.available,
    })),
  };
  const baseline = await readBaseline(target(), seed);
  await quiescentWrites();
  const before = new Set((await deadLetters()).map((d) => d.messageId));
  await applyFaults(target(), shortened(cell.faults));

  // A cell whose fault the client may see (DynamoDB refusing calls: the API answers 429; a function dying
  // before its answer: 500) is sent as a client that honours the contract sends: again, with the same key.
  // Every other cell's first answer must be the one a run without the fault gives.
  const send = cell.answersUnchanged
    ? post
    : <T>(path: string, body: unknown, headers: Record<string, string>) =>
        postResending<T>(path, body, headers, { afterServerErrors: cell.faults.functions.length > 0 });
  const orders: [string, string, number][] = [
    [ample.customerId, stocked.productId, 1],
    [ample.customerId, scarce.productId, 1],
    [ample.customerId, scarce.productId, 1],
    [tight.customerId, stocked.productId, 2],
  ];
  const ledger = await Promise.all(
    orders.map(async ([customerId, productId, quantity]) => {
      const idempotencyKey = randomUUID();
      const items = [{ productId, quantity }];
      const placedAt = Date.now();
      const placed = await send<{ orderId: string }>(
        '/orders',
        { customerId, items },
        { 'idempotency-key': idempotencyKey },
      );
      expect([cell.name, placed.status]).toEqual([cell.name, 202]);
      return {
        idempotencyKey,
        customerId,
        items,
        placedAt,
        orderId: placed.body.orderId,
      } satisfies LedgerLine;
    }),
  );
  const reservationKey = randomUUID();
  const reserved = await send<{ reservationId: string; expiresAt: string }>(
    `/products/${stocked.productId}/reservations`,
    { quantity: 1 },
    { 'idempotency-key': reservationKey },
  );
  expect([cell.name, reserved.status]).toEqual([cell.name, 201]);
  const reservations: ReservationLine[] = [
    {
      idempotencyKey: reservationKey,
      productId: stocked.productId,
      quantity: 1,
      sentAt: Date.now(),
      reservationId: reserved.body.reservationId,
      expiresAt: reserved.body.expiresAt,
    },
  ];

  // Every order final under the fault (a late step's attempts take the Task's timeout and more).
  for (const line of ledger)
    await eventually(
      () => get<OrderView>(`/orders/${line.orderId}`),
      (r) => r.status === 200 && r.body.status !== 'PENDING',
      150_000,
    );
  // A fault that must make dead letters has made them (a rule target's retries take some seconds).
  if (cell.deadLetters === 'expected')
    await eventually(deadLetters, (all) => all.some((d) => !before.has(d.messageId)), 60_000);
  await quiescentWrites(undefined, undefined, LONGEST_EXECUTION_MS);
  await applyFaults(target(), undefined);
  const letters = (await deadLetters())
    .filter((d) => !before.has(d.messageId))
    .map((d) => explainDeadLetter(d, shortened(cell.faults)));
  let redriven: { redriven: number; left: string[] } | undefined;
  // Every dead letter, expected or not, is redriven before the invariants, as the full run does.
  if (letters.length > 0 || cell.deadLetters === 'expected') {
    const result = await redrive(awsEndpoint());
    redriven = {
      redriven: result.redriven.length,
      left: result.left.map((l) => `${l.queue} ${l.messageId}: ${l.reason}`),
    };
    await quiescentWrites();
  }
  const report = await checkInvariants(
    target(),
    seed,
    baseline,
    ledger,
    { sagaDeadlineSeconds: 30, finalGraceSeconds: 120, settleSeconds: 20 },
    reservations,
  );
  const audit = await auditEffects(target(), {
    customerIds: new Set(seed.customers.map((c) => c.customerId)),
    productIds: new Set(seed.products.map((p) => p.productId)),
    orders: ledger,
    reservationIds: new Set([reserved.body.reservationId]),
  });
  const result = judgeCell(cell, {
    orders: ledger.length,
    outcomes: report.orders.outcomes,
    failures: report.checks.flatMap((c) => c.violations.map((v) => `${c.name}: ${v}`)),
    chargedTwice: audit.chargedTwice,
    withoutCause: audit.withoutCause,
    deadLetters: letters,
    retries: 0,
    taskFailures: 0,
    ...(redriven ? { redrive: redriven } : {}),
  });
  return { result, outcomes: report.orders.outcomes };
}

describe('chaos, short form: every cell', () => {
  test.each(cells.map((cell) => [cell.name, cell] as const))(
    '%s',
    async (_name, cell) => {
      const { result, outcomes } = await shortForm(cell);
      expect(result.problems).toEqual([]);
      // The edges were reached: the scarce product's last unit went to one order, the other was cancelled.
      expect(Object.keys(outcomes).some((o) => o.startsWith('CANCELLED'))).toBe(true);
    },
    // Every order final (150 s at most), its dead letters (60 s), then quiescence.
    400_000,
  );
});
