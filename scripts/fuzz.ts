/**
 * `npm run fuzz -- [--cases N] [--seconds S] [--seed K] [--api URL --aws-endpoint URL]`:
 * property-based fuzzing of the HTTP API from its OpenAPI document, with
 * Schemathesis (PyPI), installed by the project itself (see `python-tool.ts`:
 * a venv under `local/.cache/` with the pinned version).
 *
 * It starts a local cloud (or targets one with `--api`), seeds a few customers,
 * products, reservations and an order so that path parameters and bodies can
 * name real ids (the fuzz caller's own and another customer's, which must
 * answer 404), gets tokens from the local issuer (a shop caller's; the
 * operator's for the admin-only routes), and runs Schemathesis against the document the API serves
 * (GET /openapi.json) with valid and invalid data, one request at a time. A
 * finding is any of: a 5xx, a status, content type, header or body the
 * document does not describe, data the document calls invalid accepted, or a
 * request answered 4xx that wrote a DynamoDB item (the local cloud's counters;
 * see scripts/fuzz_hooks.py for why that check is sound). Exits 1 on a finding; its output names the seed that replays it.
 *
 * `--cases` bounds the generated cases per operation (default 1000), `--seconds`
 * spends a time budget instead (Schemathesis then repeats its phases until the
 * budget is spent). `npm test` runs a short fuzz (test/integration/fuzz.test.ts).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR, type CommandSpec, parseCommandLine, startLocalCloud } from '@commerce/local-cloud';
import { ADMIN, claimsOf, localToken, SHOP } from '../load/tokens';
import { ensurePythonTool } from './python-tool';

export const SCHEMATHESIS_VERSION = '4.32.5';

const PROJECT_ROOT = join(__dirname, '..');
/** Schemathesis' working directory: it keeps a cache there (`.schemathesis/`), and its reports. */
const WORK_DIR = join(PROJECT_ROOT, 'local', '.cache', 'fuzz');

export const ensureSchemathesis = (log?: (message: string) => void): string =>
  ensurePythonTool({ name: 'schemathesis', version: SCHEMATHESIS_VERSION, executable: 'schemathesis' }, log);

/** Schemathesis' own checks the fuzz runs, and the project's (scripts/fuzz_hooks.py). */
export const FUZZ_CHECKS = [
  'not_a_server_error',
  // Another customer's id in a shop caller's request answers 404, as an unknown one does.
  'others_records_not_found',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
  'response_headers_conformance',
  // Data the document calls invalid must be refused: the validation is no looser than the document.
  'negative_data_rejection',
  'client_error_wrote_nothing',
] as const;

/**
 * Schemathesis' phases: the document's examples, its boundary cases
 * (coverage), random cases (fuzzing), and sequences that follow the links it
 * infers from the answers (stateful: create a product, reserve from it, ...).
 */
export const ALL_PHASES = ['examples', 'coverage', 'fuzzing', 'stateful'] as const;

/** Ids of real resources, by the path-parameter name that takes them. */
export type Fixtures = Record<
  'customerId' | 'productId' | 'reservationId' | 'orderId' | 'paymentId',
  string[]
>;

/** The fuzz's callers: the shop caller it fuzzes as, the operator (admin routes), and their tokens. */
export interface FuzzCallers {
  /** The caller Schemathesis acts as on every route a shop token may call. */
  readonly shop: string;
  /** The operator's token, for the routes only an admin may call (their cases would all be 403 otherwise). */
  readonly admin: string;
}

async function send<T>(
  apiUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers = {},
) {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      ...(method === 'POST' ? { 'idempotency-key': `fuzz-seed-${randomUUID()}` } : {}),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`seeding: ${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * A few resources of every kind, in every state a request can meet: a product
 * with stock and one sold out, a held and a released reservation, a customer
 * with credit, a confirmed order (with its payment) and a cancelled one (out
 * of stock) — all the fuzz caller's own — and another customer's records
 * (`others`): a customer with credit and its confirmed order, payment and
 * held reservation, and a customer without credit with its declined order.
 * A shop caller must find none of those: Schemathesis puts them in its cases
 * beside the caller's own, and scripts/fuzz_hooks.py checks each answers
 * 404 (or at least no 2xx).
 */
export async function seedFixtures(
  apiUrl: string,
  awsEndpoint: string,
): Promise<{ fixtures: Fixtures; others: Fixtures; callers: FuzzCallers }> {
  const run = Date.now().toString(36);
  const [admin, shop, other, broke] = await Promise.all([
    localToken(awsEndpoint, `fuzz-operator-${run}`, ADMIN),
    localToken(awsEndpoint, `fuzz-${run}`, SHOP),
    localToken(awsEndpoint, `fuzz-other-${run}`, SHOP),
    localToken(awsEndpoint, `fuzz-broke-${run}`, SHOP),
  ]);
  // Credit only an admin may give; the record then belongs to the caller named by ownerSub.
  const customer = (name: string, creditLimitCents: number, token: string) =>
    send<{ customerId: string }>(apiUrl, admin, 'POST', '/customers', {
      name,
      email: `${name.toLowerCase()}@example.com`,
      creditLimitCents,
      ownerSub: claimsOf(token).sub,
    });
  const product = (name: string, stock: number) =>
    send<{ productId: string }>(apiUrl, admin, 'POST', '/products', {
      sku: `FUZZ-${name}-${run}`,
      name,
      priceCents: 999,
      stock,
    });
  const reserve = (token: string, productId: string) =>
    send<{ reservationId: string }>(apiUrl, token, 'POST', `/products/${productId}/reservations`, {
      quantity: 1,
    });
  // Prefer: wait, so that the order is final (and has its payment) when it comes back.
  const order = (token: string, customerId: string, productId: string) =>
    send<{ orderId: string; paymentId?: string; status: string }>(
      apiUrl,
      token,
      'POST',
      '/orders',
      { customerId, items: [{ productId, quantity: 1 }] },
      { prefer: 'wait=10' },
    );

  const rich = await customer('Fuzz', 10_000_000, shop);
  const someoneElse = await customer('Other', 10_000_000, other);
  const poor = await customer('Broke', 0, broke);
  const stocked = await product('Stocked', 1_000_000);
  const soldOut = await product('SoldOut', 0);
  const held = await reserve(shop, stocked.productId);
  const released = await reserve(shop, stocked.productId);
  await send(apiUrl, shop, 'DELETE', `/products/${stocked.productId}/reservations/${released.reservationId}`);
  const confirmed = await order(shop, rich.customerId, stocked.productId);
  const outOfStock = await order(shop, rich.customerId, soldOut.productId);
  const othersHeld = await reserve(other, stocked.productId);
  const othersConfirmed = await order(other, someoneElse.customerId, stocked.productId);
  const declined = await order(broke, poor.customerId, stocked.productId);
  if (!confirmed.paymentId || !othersConfirmed.paymentId)
    throw new Error(`seeding: an order did not settle: ${JSON.stringify([confirmed, othersConfirmed])}`);
  return {
    fixtures: {
      customerId: [rich.customerId],
      productId: [stocked.productId, soldOut.productId],
      reservationId: [held.reservationId, released.reservationId],
      orderId: [confirmed.orderId, outOfStock.orderId],
      paymentId: [confirmed.paymentId],
    },
    others: {
      customerId: [someoneElse.customerId, poor.customerId],
      productId: [],
      reservationId: [othersHeld.reservationId],
      orderId: [othersConfirmed.orderId, declined.orderId],
      paymentId: [othersConfirmed.paymentId],
    },
    callers: { shop, admin },
  };
}

export interface FuzzOptions {
  readonly apiUrl: string;
  readonly awsEndpoint: string;
  /** Generated cases per operation at most (Schemathesis' --max-examples). */
  readonly cases?: number;
  /** A time budget instead: Schemathesis repeats its phases until it is spent. */
  readonly seconds?: number;
  /** Schemathesis' seed: an integer, as digits (it prints 128-bit ones, beyond a JavaScript number). */
  readonly seed?: string;
  /** Default: all of them. */
  readonly phases?: readonly (typeof ALL_PHASES)[number][];
  /** Where Schemathesis writes its JUnit report. */
  readonly reportDir?: string;
  /** Each line of Schemathesis' output as it comes. */
  readonly onOutput?: (text: string) => void;
  readonly log?: (message: string) => void;
}

export interface FuzzResult {
  /** Schemathesis' exit code: 0 when no check failed. */
  readonly exitCode: number | null;
  readonly output: string;
  /** The seed the run used (Schemathesis prints it; pass it back with --seed to replay). */
  readonly seed: string | undefined;
}

/** Runs Schemathesis against a running local cloud; resolves when it ends. */
export async function fuzz(options: FuzzOptions): Promise<FuzzResult> {
  const schemathesis = ensureSchemathesis(options.log);
  const { fixtures, others, callers } = await seedFixtures(options.apiUrl, options.awsEndpoint);
  const args = [
    'run',
    `${options.apiUrl}/openapi.json`,
    '--url',
    options.apiUrl,
    '--checks',
    FUZZ_CHECKS.join(','),
    // Valid and invalid data: bad input must be refused (4xx), in the document's shape, with no write.
    '--mode',
    'all',
    '--phases',
    (options.phases ?? ALL_PHASES).join(','),
    // One request at a time: the 4xx check attributes the counters' moves to the request in flight.
    '--workers',
    '1',
    '--max-examples',
    String(options.cases ?? 1000),
    ...(options.seconds ? ['--max-time', String(options.seconds)] : []),
    ...(options.seed !== undefined ? ['--seed', options.seed] : []),
    // The caller's token as Schemathesis's own header: its cases without it (the security scheme's
    // negative cases) then go out without one and must be refused 401; fuzz_hooks.py swaps in the
    // operator's token on the admin-only routes, and picks a registration's sender.
    '--header',
    `Authorization: Bearer ${callers.shop}`,
    // Prefer: wait may hold a request up to 10 s.
    '--request-timeout',
    '20',
    // No .hypothesis directory in the project: a failure is replayed from its seed.
    '--generation-database',
    'none',
    '--no-color',
    '--report',
    'junit',
    '--report-dir',
    options.reportDir ?? join(WORK_DIR, 'report'),
  ];
  mkdirSync(WORK_DIR, { recursive: true });
  const child = spawn(schemathesis, args, {
    cwd: WORK_DIR,
    env: {
      ...process.env,
      PYTHONPATH: join(PROJECT_ROOT, 'scripts'),
      SCHEMATHESIS_HOOKS: 'fuzz_hooks',
      // No __pycache__ beside the hooks in scripts/.
      PYTHONDONTWRITEBYTECODE: '1',
      FUZZ_API_URL: options.apiUrl,
      FUZZ_AWS_ENDPOINT: options.awsEndpoint,
      FUZZ_FIXTURES: JSON.stringify(fixtures),
      // Another customer's ids, put in the cases beside the caller's own: each must answer 404.
      FUZZ_OTHERS: JSON.stringify(others),
      // The caller's shop token on every route it may call, the operator's on the admin-only ones.
      FUZZ_SHOP_TOKEN: callers.shop,
      FUZZ_ADMIN_TOKEN: callers.admin,
      // Plain output for a log or a test's failure message.
      NO_COLOR: '1',
      COLUMNS: '120',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    options.onOutput?.(text);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { exitCode, output, seed: /^Seed: (\d+)$/m.exec(output)?.[1] };
}

const positiveInteger = (name: string, value: string | undefined) => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, not ${value}`);
  return n;
};

const seedOption = (value: string) => {
  if (!/^\d+$/.test(value)) throw new Error(`--seed must be a non-negative integer, not ${value}`);
  return value;
};

export const FUZZ_COMMAND = {
  usage: 'npm run fuzz -- [options]',
  description:
    'Property-based fuzzing of the HTTP API from its OpenAPI document with Schemathesis (installed in a\n' +
    'venv under local/.cache/ on first use), against a local cloud it starts (or --api). A finding: a\n' +
    '5xx, an answer the document does not describe, invalid data accepted, or a 4xx that wrote an item.\n' +
    'Exits 1 on a finding; its output names the seed that replays it.',
  options: {
    cases: {
      type: 'string',
      value: 'N',
      defaultText: '1000',
      description: 'generated cases per operation at most',
    },
    seconds: {
      type: 'string',
      value: 'S',
      defaultText: 'none (--cases bounds it)',
      description: 'a time budget instead: the phases repeat until it is spent',
    },
    seed: {
      type: 'string',
      value: 'K',
      defaultText: 'a random one',
      description: "Schemathesis' seed (a finding's replay)",
    },
    api: {
      type: 'string',
      value: 'URL',
      defaultText: 'a local cloud of its own',
      description: 'fuzz a running local cloud, e.g. http://127.0.0.1:3000',
    },
    'aws-endpoint': {
      type: 'string',
      value: 'URL',
      defaultText: 'for --api http://127.0.0.1:<port>, the port after it',
      description: "the local cloud's AWS endpoint (issuer, counters)",
    },
  },
  examples: [
    'npm run fuzz -- --cases 50',
    'npm run fuzz -- --seconds 600',
    'npm run fuzz -- --api http://127.0.0.1:3000 --seed 1234',
  ],
} as const satisfies CommandSpec;

async function main() {
  const { values } = parseCommandLine(FUZZ_COMMAND);
  const log = (message: string) => console.error(`[fuzz] ${message}`);
  let stopCloud: (() => Promise<void>) | undefined;
  let apiUrl: string;
  let awsEndpoint = values['aws-endpoint']?.replace(/\/$/, '');
  if (values.api) {
    apiUrl = values.api.replace(/\/$/, '');
    // `npm start` serves its AWS endpoint (the counters the 4xx check reads) on the API's port plus one.
    const port = /^http:\/\/127\.0\.0\.1:(\d+)$/.exec(apiUrl)?.[1];
    awsEndpoint ??= port ? `http://127.0.0.1:${Number(port) + 1}` : undefined;
  } else {
    // Its own assembly, so that `npm start`'s cdk.out is left alone.
    const cloud = await startLocalCloud({
      port: 0,
      awsPort: 0,
      assemblyDir: join(CACHE_DIR, 'assembly-fuzz'),
      log,
    });
    stopCloud = cloud.stop;
    apiUrl = cloud.url;
    awsEndpoint = cloud.awsEndpoint;
    log(`local cloud at ${apiUrl} (AWS endpoint ${awsEndpoint})`);
  }
  if (!awsEndpoint) throw new Error('--aws-endpoint is needed with an --api that is not a local cloud');
  try {
    const seconds = positiveInteger('seconds', values.seconds);
    const result = await fuzz({
      apiUrl,
      awsEndpoint,
      ...(values.cases ? { cases: positiveInteger('cases', values.cases)! } : {}),
      ...(seconds ? { seconds } : {}),
      ...(values.seed ? { seed: seedOption(values.seed) } : {}),
      onOutput: (text) => process.stdout.write(text),
      log,
    });
    process.exitCode = result.exitCode === 0 ? 0 : 1;
  } finally {
    await stopCloud?.();
  }
}

if (require.main === module) {
  main().catch((error: Error) => {
    console.error(error);
    process.exit(1);
  });
}
