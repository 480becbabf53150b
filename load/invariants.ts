/**
 * The invariants of the API contract, checked through the API of the target
 * after a run:
 *
 * - every order the run placed is final (CONFIRMED or CANCELLED) by its
 *   deadline plus the grace the sweeper has;
 * - its payment agrees: a CONFIRMED order has a CAPTURED payment of its
 *   total, a CANCELLED one holds no money (no payment, DECLINED or REFUNDED);
 * - for every seeded customer: availableCredit = limit − captured + refunded
 *   ≥ 0, i.e. what it was before the run minus what the run's orders hold;
 * - for every seeded product: available + reserved + sold = the stock it
 *   received, none negative, and sold grew by exactly the quantity of the
 *   run's CONFIRMED orders;
 * - for every seeded product: reserved = what its live reservations and its
 *   unconfirmed orders hold (`expectedReserved`).
 *
 * Read models are eventually consistent: a balance or count that must equal
 * the run's total is re-read until it does, for at most `settleSeconds`;
 * conservation and signs are checked on every read.
 */
import type { LedgerLine, ReservationLine } from './processor';
import type { Seed } from './seed';
import { mapPool, request, sleep, type Target } from './target';

export interface InvariantOptions {
  readonly sagaDeadlineSeconds: number;
  /** After the deadline: the sweeper's grace plus its interval. */
  readonly finalGraceSeconds: number;
  readonly settleSeconds: number;
}

export const DEFAULT_INVARIANT_OPTIONS: InvariantOptions = {
  sagaDeadlineSeconds: 30,
  finalGraceSeconds: 120,
  settleSeconds: 30,
};

export interface Baseline {
  readonly availableCredit: ReadonlyMap<string, number>;
  readonly sold: ReadonlyMap<string, number>;
  /** What each product held reserved before the run (absent in a baseline read before it was kept). */
  readonly reserved?: ReadonlyMap<string, number>;
}

export interface InvariantCheck {
  readonly name: string;
  readonly checked: number;
  readonly violations: readonly string[];
}

export interface InvariantReport {
  readonly ok: boolean;
  readonly checks: readonly InvariantCheck[];
  readonly orders: { readonly placed: number; readonly outcomes: Record<string, number> };
}

interface CustomerView {
  customerId: string;
  creditLimitCents: number;
  availableCreditCents: number;
}
interface ProductView {
  productId: string;
  available: number;
  reserved: number;
  sold: number;
}
interface OrderView {
  orderId: string;
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED';
  cancellationReason?: string;
  paymentId?: string;
  totalCents: number;
}
interface PaymentView {
  paymentId: string;
  orderId: string;
  amountCents: number;
  status: 'CAPTURED' | 'DECLINED' | 'REFUNDED';
}

const CONCURRENCY = 16;

async function read<T>(target: Target, path: string): Promise<T> {
  const r = await request<T>(target, 'GET', path);
  if (r.status !== 200) throw new Error(`GET ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** What the run's checks compare against: each seeded customer's credit and product's sold count before it. */
export async function readBaseline(target: Target, seed: Seed): Promise<Baseline> {
  const credit = await mapPool(seed.customers, CONCURRENCY, async (c) => {
    const view = await read<CustomerView>(target, `/customers/${c.customerId}`);
    return [c.customerId, view.availableCreditCents] as const;
  });
  const products = await mapPool(seed.products, CONCURRENCY, async (p) => {
    const view = await read<ProductView>(target, `/products/${p.productId}`);
    return [p.productId, view] as const;
  });
  return {
    availableCredit: new Map(credit),
    sold: new Map(products.map(([id, v]) => [id, v.sold])),
    reserved: new Map(products.map(([id, v]) => [id, v.reserved])),
  };
}

/** Re-reads until `settled` holds on a read or `settleSeconds` pass; `onRead` sees every read. */
async function settle<T>(
  readOnce: () => Promise<T>,
  settled: (value: T) => boolean,
  onRead: (value: T) => void,
  settleSeconds: number,
): Promise<T> {
  const deadline = Date.now() + settleSeconds * 1000;
  for (;;) {
    const value = await readOnce();
    onRead(value);
    if (settled(value) || Date.now() > deadline) return value;
    await sleep(500);
  }
}

/**
 * What a product must hold reserved after a run, at `now`: `exactly` the
 * units of the run's reservations still live (answered 201, not yet past
 * `expiresAt`: the mix never releases one), plus up to `unsure` units more
 * that may or may not be held: a reservation past its expiry the expirer
 * has not swept yet, one sent whose answer never came (it may have been
 * made), an order still PENDING (it may hold its stock). A CONFIRMED order
 * holds none (sold), nor a CANCELLED one (released). `reservedBefore` is
 * what it held before the run (the run's own reservations come on top).
 */
export function expectedReserved(
  productId: string,
  reservedBefore: number,
  reservations: readonly ReservationLine[],
  pendingOrders: readonly { readonly items: readonly { productId: string; quantity: number }[] }[],
  now: number,
): { exactly: number; unsure: number } {
  let exactly = reservedBefore;
  let unsure = 0;
  const byKey = new Map<string, ReservationLine>();
  for (const line of reservations) {
    if (line.productId !== productId) continue;
    const seen = byKey.get(line.idempotencyKey);
    if (!seen || (seen.reservationId === undefined && seen.refusedWith === undefined))
      byKey.set(line.idempotencyKey, line);
  }
  for (const line of byKey.values()) {
    if (line.refusedWith !== undefined) continue;
    if (line.reservationId === undefined) unsure += line.quantity;
    else if (Date.parse(line.expiresAt ?? '') > now) exactly += line.quantity;
    else unsure += line.quantity;
  }
  for (const order of pendingOrders)
    for (const item of order.items) if (item.productId === productId) unsure += item.quantity;
  return { exactly, unsure };
}

export async function checkInvariants(
  target: Target,
  seed: Seed,
  baseline: Baseline,
  ledger: readonly (LedgerLine & { readonly orderId: string })[],
  options: InvariantOptions,
  /** The run's reservations (the mix's reserve_stock); without them `reserved` is checked against its orders alone. */
  reservations: readonly ReservationLine[] = [],
): Promise<InvariantReport> {
  const { finals, pendingOrders, finality } = await finalOrders(target, ledger, options);
  const { outcomes, payments, held, confirmedUnits } = await checkPayments(target, finals);
  const credit = await checkCredit(target, seed, baseline, held, options);
  const { stock, reservedHeld } = await checkStock(target, seed, baseline, options, {
    confirmedUnits,
    reservations,
    pendingOrders,
  });

  // A violation seen on several reads of the same view is one violation.
  const unique = (violations: string[]) => [...new Set(violations)];
  const checks: InvariantCheck[] = [
    {
      name: 'every placed order final by its deadline plus grace',
      checked: ledger.length,
      violations: unique(finality),
    },
    {
      name: 'payments agree with orders (CONFIRMED ⇒ CAPTURED of its total; CANCELLED holds none)',
      checked: ledger.length,
      violations: unique(payments),
    },
    {
      name: 'customers: availableCredit = limit − captured + refunded ≥ 0',
      checked: seed.customers.length,
      violations: unique(credit),
    },
    {
      name: 'products: available + reserved + sold = received, none negative, sold = before + confirmed',
      checked: seed.products.length,
      violations: unique(stock),
    },
    {
      name: 'products: reserved = what live reservations and unconfirmed orders hold',
      checked: seed.products.length,
      violations: unique(reservedHeld),
    },
  ];
  return {
    ok: checks.every((c) => c.violations.length === 0),
    checks,
    orders: { placed: ledger.length, outcomes },
  };
}

/** A line of the run's ledger: an order the run placed. */
type PlacedLine = LedgerLine & { readonly orderId: string };

type Final = { readonly line: PlacedLine; readonly order: OrderView };

/**
 * Every order final by its deadline plus grace: PENDING ones are re-read
 * until then. `finals` has each order's final view (undefined for one still
 * PENDING), `pendingOrders` the orders still PENDING, `finality` the violations.
 */
async function finalOrders(target: Target, ledger: readonly PlacedLine[], options: InvariantOptions) {
  const finality: string[] = [];
  const pendingOrders: LedgerLine[] = [];
  const finals = await mapPool(ledger, CONCURRENCY, async (line): Promise<Final | undefined> => {
    const due = line.placedAt + (options.sagaDeadlineSeconds + options.finalGraceSeconds) * 1000;
    for (;;) {
      const order = await read<OrderView>(target, `/orders/${line.orderId}`);
      if (order.status !== 'PENDING') return { line, order };
      if (Date.now() > due) {
        pendingOrders.push(line);
        finality.push(
          `order ${line.orderId} still PENDING ${((Date.now() - line.placedAt) / 1000).toFixed(0)} s after it was placed`,
        );
        return undefined;
      }
      await sleep(1000);
    }
  });
  return { finals, pendingOrders, finality };
}

/**
 * Payments agree with the orders; the outcomes of the orders, the money each
 * customer's orders hold (`held`), the units each product sold (`confirmedUnits`).
 */
async function checkPayments(target: Target, finals: readonly (Final | undefined)[]) {
  const outcomes: Record<string, number> = {};
  const payments: string[] = [];
  const held = new Map<string, number>();
  const confirmedUnits = new Map<string, number>();
  await mapPool(finals, CONCURRENCY, async (final) => {
    if (!final) return;
    const { line, order } = final;
    const outcome = order.cancellationReason ? `${order.status} ${order.cancellationReason}` : order.status;
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    const payment = order.paymentId
      ? await read<PaymentView>(target, `/payments/${order.paymentId}`)
      : undefined;
    if (order.status === 'CONFIRMED') {
      if (payment?.status !== 'CAPTURED' || payment.amountCents !== order.totalCents)
        payments.push(
          `order ${order.orderId} CONFIRMED for ${order.totalCents} but its payment is ${payment ? `${payment.status} ${payment.amountCents}` : 'missing'}`,
        );
      held.set(
        line.customerId,
        (held.get(line.customerId) ?? 0) + (payment?.status === 'CAPTURED' ? payment.amountCents : 0),
      );
      for (const item of line.items)
        confirmedUnits.set(item.productId, (confirmedUnits.get(item.productId) ?? 0) + item.quantity);
    } else if (payment?.status === 'CAPTURED') {
      payments.push(
        `order ${order.orderId} CANCELLED (${order.cancellationReason}) but its payment is CAPTURED`,
      );
      held.set(line.customerId, (held.get(line.customerId) ?? 0) + payment.amountCents);
    }
  });
  return { outcomes, payments, held, confirmedUnits };
}

/** Each customer's credit: never negative, its limit as seeded, and what it was before less what the run's orders hold. */
async function checkCredit(
  target: Target,
  seed: Seed,
  baseline: Baseline,
  held: ReadonlyMap<string, number>,
  options: InvariantOptions,
) {
  const credit: string[] = [];
  await mapPool(seed.customers, CONCURRENCY, async (c) => {
    const expected = baseline.availableCredit.get(c.customerId)! - (held.get(c.customerId) ?? 0);
    const view = await settle(
      () => read<CustomerView>(target, `/customers/${c.customerId}`),
      (v) => v.availableCreditCents === expected,
      (v) => {
        if (v.availableCreditCents < 0)
          credit.push(`customer ${c.customerId}: availableCredit ${v.availableCreditCents} < 0`);
        if (v.creditLimitCents !== c.creditLimitCents)
          credit.push(
            `customer ${c.customerId}: creditLimit ${v.creditLimitCents}, seeded ${c.creditLimitCents}`,
          );
      },
      options.settleSeconds,
    );
    if (view.availableCreditCents !== expected)
      credit.push(
        `customer ${c.customerId}: availableCredit ${view.availableCreditCents}, expected ${expected} (limit − captured + refunded)`,
      );
  });
  return credit;
}

/**
 * Each product's counts: conserved and never negative, sold grown by what the
 * run confirmed (`stock`), and reserved what its live reservations and
 * unconfirmed orders hold (`reservedHeld`).
 */
async function checkStock(
  target: Target,
  seed: Seed,
  baseline: Baseline,
  options: InvariantOptions,
  run: {
    readonly confirmedUnits: ReadonlyMap<string, number>;
    readonly reservations: readonly ReservationLine[];
    readonly pendingOrders: readonly LedgerLine[];
  },
) {
  const { confirmedUnits, reservations, pendingOrders } = run;
  const stock: string[] = [];
  const reservedHeld: string[] = [];
  await mapPool(seed.products, CONCURRENCY, async (p) => {
    const expectedSold = baseline.sold.get(p.productId)! + (confirmedUnits.get(p.productId) ?? 0);
    const view = await settle(
      () => read<ProductView>(target, `/products/${p.productId}`),
      (v) => v.sold === expectedSold,
      (v) => {
        if (v.available + v.reserved + v.sold !== p.stock)
          stock.push(
            `product ${p.productId}: available ${v.available} + reserved ${v.reserved} + sold ${v.sold} ≠ received ${p.stock}`,
          );
        if (v.available < 0 || v.reserved < 0 || v.sold < 0)
          stock.push(`product ${p.productId}: negative count ${JSON.stringify(v)}`);
      },
      options.settleSeconds,
    );
    if (view.sold !== expectedSold)
      stock.push(
        `product ${p.productId}: sold ${view.sold}, expected ${expectedSold} (before + confirmed by the run)`,
      );
    // Reserved: what its live reservations and unconfirmed orders hold, once the projector has caught up.
    const expected = () =>
      expectedReserved(
        p.productId,
        baseline.reserved?.get(p.productId) ?? 0,
        reservations,
        pendingOrders,
        Date.now(),
      );
    const reserved = await settle(
      () => read<ProductView>(target, `/products/${p.productId}`),
      (v) => v.reserved === expected().exactly,
      () => undefined,
      options.settleSeconds,
    );
    const { exactly, unsure } = expected();
    if (reserved.reserved < exactly || reserved.reserved > exactly + unsure)
      reservedHeld.push(
        `product ${p.productId}: reserved ${reserved.reserved}, but its live reservations and unconfirmed orders hold ${exactly}${unsure > 0 ? ` (up to ${exactly + unsure} with those unsure)` : ''}`,
      );
  });
  return { stock, reservedHeld };
}
