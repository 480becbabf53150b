/**
 * Longer than 400 lines because its requests, product setup and cases read
 * the options parsed when the module loads (the API, the target, the
 * concurrency and limits); moving them to other files means handing those
 * along, not yet done.
 *
 * The flash-sale profile: a benchmark and a check, not a test. A dedicated
 * client (Artillery cannot push this fast on this machine) sends one-unit
 * reservation requests with bounded concurrency against
 *
 *   spread: 80 products of 1,000 units (requests round-robin over them), and
 *   hot:    1 product of 80,000 units,
 *
 * and for each case reports completion time, successes, refusals, latency
 * percentiles and, from the local cloud's hot-key meter (reset before each
 * case), every table's hottest partition key and its share of the table's
 * writes. Every request is a shop caller's (its own token from the local
 * issuer): enough callers that none sends more than the per-caller hold limit,
 * and one hoarder who sends `--hoarder-requests` for the first product, spread
 * over the sale's first half. It fails (exit 1) unless exactly the units on
 * sale were reserved, the hoarder got exactly the hold limit and every further
 * request of its answered 409 HOLD_LIMIT_REACHED, every other refusal is 409
 * INSUFFICIENT_STOCK (no other caller was limited), nothing answered 5xx,
 * and every product reads `available + reserved + sold = received` through
 * the API (products are created and read with an admin token).
 *
 * Its options and environment are FLASH_SALE_COMMAND below (`npm run flash-sale -- --help`).
 */

import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { type CommandSpec, parseCommandLine } from '@commerce/local-cloud';
import { keepAliveClient } from './keep-alive';
import { machine } from './report';
import { type LocalStats, localStats, resetLocalStats, type Target } from './target';
import { bearer, type Caller, tokensFor } from './tokens';

const API = process.env.API_URL ?? 'http://127.0.0.1:3000';

/** The nearest-rank percentile of ascending `sorted`. */
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

export const FLASH_SALE_COMMAND = {
  usage: 'npm run flash-sale -- [options]',
  description:
    'A flash sale against a local cloud: one-unit reservations, `--concurrency` at a time, for a spread\n' +
    'case (the units over many products) and a hot one (all on one product), each shopper a caller of its\n' +
    'own, plus a hoarder who meets the hold limit. Reports completion time, refusals, latency and each\n' +
    "table's hottest key; fails (exit 1) unless exactly the units on sale were reserved and the stock adds up.\n" +
    'At a lower rate, on any environment, the same sale is load/flash-sale.yml (Artillery).',
  options: {
    requests: { type: 'string', value: 'N', default: '200000', description: 'requests per case' },
    units: { type: 'string', value: 'N', default: '80000', description: 'units on sale per case' },
    products: { type: 'string', value: 'N', default: '80', description: 'products of the spread case' },
    concurrency: { type: 'string', value: 'N', default: '16', description: 'requests in flight' },
    cases: { type: 'string', value: 'LIST', default: 'spread,hot', description: 'which cases, in order' },
    'max-seconds': {
      type: 'string',
      value: 'S',
      default: '1800',
      description: 'stop sending after this long per case (the run then fails)',
    },
    'hold-limit': {
      type: 'string',
      value: 'N',
      default: '10',
      description: "the stage's per-caller hold limit (holdLimitPerCaller): sizes the callers",
    },
    'hoarder-requests': {
      type: 'string',
      value: 'N',
      default: '100',
      description: "the hoarder's requests per case (0: no hoarder)",
    },
    json: {
      type: 'string',
      value: 'FILE',
      defaultText: 'none',
      description: 'also write the report as JSON',
    },
  },
  environment: {
    API_URL: 'the platform (default http://127.0.0.1:3000)',
    AWS_ENDPOINT: "the local cloud's AWS endpoint, for /_local/stats (default: the API's port plus one)",
  },
  examples: [
    'npm run flash-sale',
    'npm run flash-sale -- --requests 20000 --units 8000 --products 8 --cases spread',
    'npm run flash-sale -- --cases hot',
    'API_URL=http://127.0.0.1:3100 npm run flash-sale -- --json load/out/flash-sale.json',
  ],
} as const satisfies CommandSpec;

// Parsed when run (imported, e.g. by the help's test, it has its defaults and runs nothing).
const { values } = parseCommandLine(FLASH_SALE_COMMAND, require.main === module ? process.argv.slice(2) : []);
const REQUESTS = positive('requests');
const UNITS = positive('units');
const SPREAD_PRODUCTS = positive('products');
const CONCURRENCY = positive('concurrency');
const MAX_SECONDS = positive('max-seconds');
const HOLD_LIMIT = positive('hold-limit');
const HOARDER_REQUESTS = Number(values['hoarder-requests']);
if (!Number.isInteger(HOARDER_REQUESTS) || HOARDER_REQUESTS < 0)
  throw new Error('--hoarder-requests must be a whole number');
const CASES = String(values.cases)
  .split(',')
  .map((c) => c.trim());
// `npm start` serves its AWS endpoint on the API's port plus one.
const TARGET: Target = {
  api: API,
  awsEndpoint:
    process.env.AWS_ENDPOINT ?? API.replace(/:(\d+)$/, (_, port: string) => `:${Number(port) + 1}`),
};

function positive(name: keyof typeof values): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

interface ProductView {
  productId: string;
  available: number;
  reserved: number;
  sold: number;
}

/** Every request of the sale, over one kept-alive connection per request in flight (and one for the operator). */
const send = keepAliveClient(API, CONCURRENCY + 1);

/** A request with `token` (a shop caller's), or the operator's (creating products, reading them). */
async function request(method: string, path: string, body?: unknown, token?: string) {
  const authorization = bearer(token ?? (await tokensFor(TARGET).admin()));
  const { status, text } =
    body === undefined
      ? await send(method, path, authorization)
      : await send(
          method,
          path,
          { ...authorization, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          JSON.stringify(body),
        );
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { text };
  }
  return { status, body: parsed };
}

async function createProducts(count: number, units: number, label: string) {
  const per = Math.floor(units / count);
  if (per * count !== units) throw new Error(`${units} units do not split evenly over ${count} products`);
  const created: ProductView[] = [];
  // A few at a time: creating a product writes its shards in one transaction.
  for (let i = 0; i < count; i += 8) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(8, count - i) }, (_, j) =>
        request('POST', '/products', {
          sku: `FLASH-${label}-${i + j}`,
          name: `Flash sale ${label} ${i + j}`,
          priceCents: 1000,
          stock: per,
        }),
      ),
    );
    for (const r of batch) {
      if (r.status !== 201) throw new Error(`product not created: ${r.status} ${JSON.stringify(r.body)}`);
      created.push(r.body as unknown as ProductView);
    }
  }
  return { products: created, perProduct: per };
}

interface Outcome {
  statuses: Map<number, number>;
  codes: Map<string, number>;
  /** The hoarder's answers: reserved, and refused by code. */
  hoarder: { sent: number; reserved: number; codes: Map<string, number> };
  /** Refusals of the other callers for the hold limit (there must be none). */
  othersLimited: number;
  latencies: number[];
  seconds: number;
  sent: number;
}

let expiryChecked = false;
/**
 * Says once, at the run's first reservation, when reservations expire within
 * the time the run may take: their expiry then competes with the sale for the
 * same cores (measured: the hot case after the spread one fell from 110 to
 * 20-30 reservations a second while the spread case's 80,000 expired).
 */
function warnIfReservationsExpireDuringTheRun(expiresAt: string) {
  if (expiryChecked) return;
  expiryChecked = true;
  const ttlSeconds = (Date.parse(expiresAt) - Date.now()) / 1000;
  const runBoundSeconds = MAX_SECONDS * CASES.length;
  if (ttlSeconds < runBoundSeconds) {
    console.log(
      `  warning: reservations expire after about ${Math.round(ttlSeconds)} s, within this run's bound of ${runBoundSeconds} s; ` +
        'their expiry will compete with the sale (start the local cloud with --reservation-ttl-seconds 7200 for full-size runs)',
    );
  }
}

/**
 * Sends `requests` one-unit reservations, `CONCURRENCY` at a time, request i for product i mod n by
 * caller i mod callers.length, except every `stride`-th of the sale's first half (while stock is
 * left), which is the hoarder's, for the first product.
 */
async function sale(
  products: readonly ProductView[],
  requests: number,
  callers: readonly Caller[],
  hoarder: Caller | undefined,
): Promise<Outcome> {
  const statuses = new Map<number, number>();
  const codes = new Map<string, number>();
  const hoarded = { sent: 0, reserved: 0, codes: new Map<string, number>() };
  let othersLimited = 0;
  const stride = hoarder ? Math.max(1, Math.floor(Math.min(requests, UNITS) / 2 / HOARDER_REQUESTS)) : 0;
  const isHoarders = (i: number) =>
    hoarder !== undefined && i % stride === 0 && i / stride < HOARDER_REQUESTS;
  const latencies: number[] = new Array(requests);
  let next = 0;
  const started = performance.now();
  const deadline = started + MAX_SECONDS * 1000;
  let lastReport = started;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= requests || performance.now() > deadline) return;
      const hoarding = isHoarders(i);
      const product = hoarding ? products[0]! : products[i % products.length]!;
      const caller = hoarding ? hoarder! : callers[i % callers.length]!;
      const t = performance.now();
      let status: number;
      let code = '';
      try {
        const r = await request(
          'POST',
          `/products/${product.productId}/reservations`,
          { quantity: 1 },
          caller.token,
        );
        status = r.status;
        code = String((r.body.error as { code?: string } | undefined)?.code ?? '');
        if (status === 201) warnIfReservationsExpireDuringTheRun(String(r.body.expiresAt));
      } catch {
        status = 0; // the connection failed
      }
      latencies[i] = performance.now() - t;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (code) codes.set(code, (codes.get(code) ?? 0) + 1);
      if (hoarding) {
        hoarded.sent++;
        if (status === 201) hoarded.reserved++;
        if (code) hoarded.codes.set(code, (hoarded.codes.get(code) ?? 0) + 1);
      } else if (code === 'HOLD_LIMIT_REACHED') othersLimited++;
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        const done = [...statuses.values()].reduce((a, b) => a + b, 0);
        console.log(
          `  … ${done} done in ${((lastReport - started) / 1000).toFixed(0)} s, ${statuses.get(201) ?? 0} reserved`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const sent = Math.min(next, requests);
  return {
    statuses,
    codes,
    hoarder: hoarded,
    othersLimited,
    latencies: latencies.slice(0, sent).filter((l) => l !== undefined),
    seconds: (performance.now() - started) / 1000,
    sent,
  };
}

/** Reads every product until the read model shows all `expected` reservations (or 60 s pass). */
async function settledProducts(products: readonly ProductView[], expected: number) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const views = await Promise.all(
      products.map(
        async (p) => (await request('GET', `/products/${p.productId}`)).body as unknown as ProductView,
      ),
    );
    const reserved = views.reduce((n, v) => n + v.reserved, 0);
    if (reserved === expected || Date.now() > deadline) return views;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The counters once the streams have caught up: no table's item writes grew for 2 s (or 120 s passed). */
async function quiescentStats() {
  const read = async () => (await localStats(TARGET))!;
  const total = (s: LocalStats) => Object.values(s.writes ?? {}).reduce((n, w) => n + w.itemWrites, 0);
  const deadline = Date.now() + 120_000;
  let last = await read();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const next = await read();
    if (total(next) === total(last) || Date.now() > deadline) return next;
    last = next;
  }
}

/** Per table: its item writes, distinct keys, and its hottest key with that key's share. */
function writesPerTable(stats: Awaited<ReturnType<typeof quiescentStats>>) {
  return Object.fromEntries(
    Object.entries(stats.writes ?? {}).map(([table, w]) => [
      table,
      {
        itemWrites: w.itemWrites,
        distinctKeys: w.distinctKeys,
        hottestKey: w.hottestKeys[0]?.key,
        hottestShare: w.hottestKeys[0]?.share ?? 0,
        ...(w.busiestSecond ? { busiestSecond: w.busiestSecond } : {}),
      },
    ]),
  );
}

/** What a case must show to pass: every check named, each true or false. */
function caseChecks(
  name: 'spread' | 'hot',
  outcome: Awaited<ReturnType<typeof sale>>,
  seen: {
    reserved: number;
    refused: number;
    fiveXx: number;
    totals: { available: number; reserved: number; sold: number };
    broken: number;
    tables: ReturnType<typeof writesPerTable>;
  },
) {
  const { reserved, refused, fiveXx, totals, tables } = seen;
  return {
    allSent: outcome.sent === REQUESTS,
    exactlyTheUnitsReserved: reserved === UNITS && totals.reserved === UNITS,
    nothingLeft: totals.available === 0,
    everyOtherRefusalInsufficientStock:
      refused ===
      (outcome.codes.get('INSUFFICIENT_STOCK') ?? 0) + (outcome.hoarder.codes.get('HOLD_LIMIT_REACHED') ?? 0),
    noOtherCallerLimited: outcome.othersLimited === 0,
    // The hoarder holds the limit and no more; each of its further requests answered HOLD_LIMIT_REACHED.
    ...(HOARDER_REQUESTS > 0
      ? {
          hoarderCapped:
            outcome.hoarder.reserved === Math.min(HOLD_LIMIT, outcome.hoarder.sent) &&
            (outcome.hoarder.codes.get('HOLD_LIMIT_REACHED') ?? 0) ===
              outcome.hoarder.sent - outcome.hoarder.reserved,
        }
      : {}),
    onlyReservedOrRefused: reserved + refused === outcome.sent,
    no5xx: fiveXx === 0,
    invariantOnEveryProduct: seen.broken === 0,
    // The design's bound for one hot product: no partition key above 1/32 of a table's writes.
    ...(name === 'hot'
      ? { noKeyAboveOneThirtySecond: Object.values(tables).every((t) => t.hottestShare <= 1 / 32) }
      : {}),
  };
}

async function runCase(name: 'spread' | 'hot') {
  const productCount = name === 'spread' ? SPREAD_PRODUCTS : 1;
  console.log(
    `\n== ${name}: ${productCount} × ${UNITS / productCount} units, ${REQUESTS} requests, ${CONCURRENCY} in flight`,
  );
  const { products, perProduct } = await createProducts(productCount, UNITS, `${name}-${Date.now()}`);
  // Enough shop callers that none sends more than the hold limit, and the hoarder.
  const minting = performance.now();
  const run = `flash-${name}-${Date.now()}`;
  const callers = await tokensFor(TARGET).shopCallers(Math.ceil(REQUESTS / HOLD_LIMIT), run);
  const hoarder =
    HOARDER_REQUESTS > 0
      ? { sub: `${run}-hoarder`, token: await tokensFor(TARGET).shop(`${run}-hoarder`) }
      : undefined;
  console.log(
    `  ${callers.length} callers' tokens from the local issuer in ${((performance.now() - minting) / 1000).toFixed(1)} s`,
  );
  // Let the creations' stream records be projected before the meter starts.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await resetLocalStats(TARGET);
  const outcome = await sale(products, REQUESTS, callers, hoarder);
  const reserved = outcome.statuses.get(201) ?? 0;
  const views = await settledProducts(products, reserved);
  const stats = await quiescentStats();

  const sorted = [...outcome.latencies].sort((a, b) => a - b);
  const fiveXx = [...outcome.statuses].filter(([s]) => s >= 500 || s === 0).reduce((n, [, c]) => n + c, 0);
  const refused = outcome.statuses.get(409) ?? 0;
  const totals = views.reduce(
    (t, v) => ({
      available: t.available + v.available,
      reserved: t.reserved + v.reserved,
      sold: t.sold + v.sold,
    }),
    { available: 0, reserved: 0, sold: 0 },
  );
  const broken = views.filter((v) => v.available + v.reserved + v.sold !== perProduct || v.available < 0);
  const tables = writesPerTable(stats);
  const checks = caseChecks(name, outcome, {
    reserved,
    refused,
    fiveXx,
    totals,
    broken: broken.length,
    tables,
  });
  const report = {
    case: name,
    products: productCount,
    unitsPerProduct: perProduct,
    requests: outcome.sent,
    concurrency: CONCURRENCY,
    seconds: Number(outcome.seconds.toFixed(2)),
    requestsPerSecond: Math.round(outcome.sent / outcome.seconds),
    reserved,
    refused,
    callers: Math.ceil(REQUESTS / HOLD_LIMIT),
    hoarder: {
      sent: outcome.hoarder.sent,
      reserved: outcome.hoarder.reserved,
      refused: Object.fromEntries(outcome.hoarder.codes),
    },
    statuses: Object.fromEntries(outcome.statuses),
    latencyMs: {
      p50: Number(percentile(sorted, 50).toFixed(1)),
      p95: Number(percentile(sorted, 95).toFixed(1)),
      p99: Number(percentile(sorted, 99).toFixed(1)),
      max: Number((sorted.at(-1) ?? 0).toFixed(1)),
    },
    stock: totals,
    tables,
    checks,
  };
  printCase(report, outcome.othersLimited);
  return report;
}

/** Prints a case's report as the run's log shows it. */
function printCase(report: Awaited<ReturnType<typeof runCase>>, othersLimited: number) {
  console.log(
    `  ${report.requests} requests in ${report.seconds} s (${report.requestsPerSecond}/s): ` +
      `${report.reserved} reserved, ${report.refused} refused, statuses ${JSON.stringify(report.statuses)}`,
  );
  if (HOARDER_REQUESTS > 0) {
    console.log(
      `  the hoarder: ${report.hoarder.sent} requests, ${report.hoarder.reserved} reserved (the limit is ${HOLD_LIMIT}), ` +
        `refused ${JSON.stringify(report.hoarder.refused)}; ${othersLimited} other callers' requests refused for the limit`,
    );
  }
  console.log(
    `  latency p50 ${report.latencyMs.p50}  p95 ${report.latencyMs.p95}  p99 ${report.latencyMs.p99}  max ${report.latencyMs.max} ms`,
  );
  console.log(`  stock through the API: ${JSON.stringify(report.stock)} (received ${UNITS})`);
  console.log("  hottest partition key per table (share of the table's item writes):");
  for (const [table, t] of Object.entries(report.tables)) {
    const perSecond = t.busiestSecond
      ? `, ${(t.busiestSecond.hottestKey.share * 100).toFixed(2)}% in its busiest second`
      : '';
    console.log(
      `    ${table.padEnd(48)} ${String(t.itemWrites).padStart(7)} writes, ${String(t.distinctKeys).padStart(7)} keys, ` +
        `hottest ${(t.hottestShare * 100).toFixed(2)}%${perSecond} (${t.hottestKey})`,
    );
  }
  for (const [check, ok] of Object.entries(report.checks)) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${check}`);
}

async function main() {
  const local = /^http:\/\/127\.0\.0\.1:\d+$/;
  if (!local.test(TARGET.api) || !local.test(TARGET.awsEndpoint ?? '')) {
    throw new Error('the flash sale runs against 127.0.0.1 only');
  }
  console.log(`machine: ${machine()}`);
  console.log(`target: ${API}`);
  const reports = [];
  for (const c of CASES) {
    if (c !== 'spread' && c !== 'hot') throw new Error(`unknown case ${c}`);
    reports.push(await runCase(c));
  }
  if (values.json)
    writeFileSync(values.json, `${JSON.stringify({ machine: machine(), reports }, null, 2)}\n`);
  const failed = reports.filter((r) => Object.values(r.checks).some((ok) => !ok));
  if (failed.length > 0) {
    console.log(`\nFAILED: ${failed.map((r) => r.case).join(', ')}`);
    process.exit(1);
  }
  console.log('\nall checks passed');
}

if (require.main === module)
  main().catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
