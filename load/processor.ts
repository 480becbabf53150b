/**
 * Artillery's processor for the mix's scenarios (bundled with esbuild and
 * loaded in each of Artillery's worker threads). It picks the seeded ids,
 * builds the request bodies, writes every placed order to the run's ledger
 * (the invariant checks read it afterwards), and measures the saga end to end
 * for the orders chosen to be followed: placed → the first poll that sees the
 * order final, or (with `waitSeconds`, orders sent with `Prefer: wait=N`)
 * placed → the POST's own answer when it is `201` final.
 *
 * It serves two kinds of run:
 *
 * - **The wrapper's** (`npm run load`): its settings come from the file named
 *   by LOAD_SETTINGS, written by the runner for each level (see artillery.ts),
 *   with every customer's token minted beforehand and a ledger to write.
 * - **A script run by Artillery alone** (`artillery run -e <env> load/mix.yml`):
 *   no LOAD_SETTINGS. The seeded ids come from the script's payload (the CSV
 *   `npm run seed` writes, loaded whole as `seeded`), the tunables from its
 *   `config.variables`, and each virtual user gets its token in the scenario's
 *   `beforeScenario: authenticate` from the environment's issuer (`issuer`:
 *   `local`, the local cloud's POST /_local/token; `client-credentials`, a
 *   stage's, from COMMERCE_TOKEN_URL, COMMERCE_CLIENT_ID, COMMERCE_CLIENT_SECRET).
 *   An answer of an unexpected status fails its virtual user, so that the
 *   script's `ensure` (maxErrorRate) counts it; there is no ledger.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import type {
  Context,
  Events,
  LedgerLine,
  Next,
  ProcessorSettings,
  RequestParams,
  ReservationLine,
  Response,
} from './processor-types';
import { EXPECTED_STATUS, type Operation } from './profiles';
import { ADMIN, localAwsEndpoint, localToken, SHOP, stageTokens, type TokenSource } from './tokens';

export type {
  Context,
  Events,
  LedgerLine,
  Next,
  ProcessorSettings,
  RequestParams,
  ReservationLine,
  Response,
} from './processor-types';

/** The wrapper's settings; undefined when Artillery runs a script of load/ on its own. */
const settings: ProcessorSettings | undefined = process.env.LOAD_SETTINGS
  ? (JSON.parse(readFileSync(process.env.LOAD_SETTINGS, 'utf8')) as ProcessorSettings)
  : undefined;

/** A seeded row of the payload CSV (seed.ts, PAYLOAD_FIELDS); a column is empty where its list ran out. */
interface SeededRow {
  readonly customerId?: unknown;
  readonly sub?: unknown;
  readonly productId?: unknown;
}

/** The issuers a script's environment may name in its `issuer` variable. */
export const ISSUERS = ['local', 'client-credentials'] as const;

/** A tunable of the run: the wrapper's setting, or the script's variable of the same name. */
function tunable(context: Context, name: 'pollFraction' | 'pollIntervalMs' | 'sagaLimitMs'): number {
  if (settings) return settings[name];
  const value = Number(context.vars[name]);
  if (!Number.isFinite(value)) throw new Error(`the script's config.variables has no number ${name}`);
  return value;
}

/** Per worker thread: the seeded ids of the payload, and the tokens already minted or fetched. */
let seeded: { customers: { customerId: string; sub: string }[]; productIds: string[] } | undefined;
const minted = new Map<string, Promise<string>>();
let stage: TokenSource | undefined;

function seededIds(context: Context) {
  if (seeded) return seeded;
  const rows = context.vars.seeded;
  if (!Array.isArray(rows) || rows.length === 0)
    throw new Error('no seeded ids: run `npm run seed` first (it writes load/out/seed.csv, the payload)');
  const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  const customers = (rows as SeededRow[])
    .filter((r) => text(r.customerId))
    .map((r) => ({ customerId: text(r.customerId), sub: text(r.sub) }));
  const productIds = (rows as SeededRow[]).map((r) => text(r.productId)).filter(Boolean);
  if (customers.length === 0 || productIds.length === 0)
    throw new Error('the payload names no customer or no product: run `npm run seed` again');
  seeded = { customers, productIds };
  return seeded;
}

/** A token for `sub` from the local issuer, minted once per worker thread (the first virtual user asks). */
function localCallerToken(awsEndpoint: string, sub: string, scope: string) {
  const key = `${scope} ${sub}`;
  let token = minted.get(key);
  if (!token) {
    token = localToken(awsEndpoint, sub, scope);
    // A failed mint is asked again by the next virtual user.
    token.catch(() => minted.delete(key));
    minted.set(key, token);
  }
  return token;
}

/**
 * `beforeScenario` of the scripts: the virtual user's customer (a seeded one, at random) and its token
 * from the environment's issuer. Locally the customer's own shop token (its `sub`'s), and the issuer's
 * endpoint, where a new customer gets a token of its own; on a stage the operator's token, which acts for
 * every customer (or a shop token of COMMERCE_SHOP_TOKENS with the customer's `sub`).
 */
export function authenticate(context: Context, _events: Events, next: Next) {
  (async () => {
    const ids = seededIds(context);
    const customer = pick(ids.customers);
    context.vars.customerId = customer.customerId;
    context.vars.productIds = ids.productIds;
    const issuer = String(context.vars.issuer);
    if (issuer === 'local') {
      const awsEndpoint = localAwsEndpoint(String(context.vars.target));
      context.vars.tokenEndpoint = `${awsEndpoint}/_local/token`;
      // A customer no shop caller owns (seeded without a sub) is the operator's to act for.
      context.vars.token = await (customer.sub
        ? localCallerToken(awsEndpoint, customer.sub, SHOP)
        : localCallerToken(awsEndpoint, 'load-operator', ADMIN));
    } else if (issuer === 'client-credentials') {
      stage ??= stageTokens();
      context.vars.adminToken = await stage.admin();
      context.vars.token = await stage.shop(customer.sub);
    } else {
      throw new Error(`the script's variable issuer must be one of ${ISSUERS.join(', ')}, not ${issuer}`);
    }
  })().then(
    () => next(),
    (error: Error) => next(error),
  );
}

/** The virtual user's customer: the one authenticate chose, else (the wrapper) any seeded one. */
function customerOf(context: Context): { customerId: string; token: string } {
  if (typeof context.vars.customerId === 'string' && typeof context.vars.token === 'string')
    return { customerId: context.vars.customerId, token: context.vars.token };
  if (!settings) throw new Error('no customer: the scenario needs beforeScenario: authenticate');
  return pick(settings.customers);
}

const productIdsOf = (context: Context): readonly string[] =>
  settings?.productIds ?? (context.vars.productIds as string[]);

/**
 * A script run alone fails a virtual user whose request was answered with a status its operation does
 * not expect, so that Artillery counts it (vusers.failed, errors.*, ensure's maxErrorRate). The wrapper
 * counts unexpected statuses itself, per operation (artillery.ts), and its runs go on.
 */
function unexpected(name: Operation, status: number): Error | undefined {
  if (settings) return undefined;
  return status === EXPECTED_STATUS[name] ? undefined : new Error(`${name} answered ${status}`);
}

/** `afterResponse` of a request named after its operation (reserve_stock, create_customer): its status. */
export function expectStatus(
  params: RequestParams & { name?: string },
  response: Response,
  _context: Context,
  _events: Events,
  next: Next,
) {
  next(unexpected(params.name as Operation, response.statusCode));
}

const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)]!;

/** `count` distinct values of `values` (or all of them if there are fewer). */
function pickDistinct<T>(values: readonly T[], count: number): T[] {
  const chosen = new Set<T>();
  while (chosen.size < Math.min(count, values.length)) chosen.add(pick(values));
  return [...chosen];
}

const parse = (body: unknown): Record<string, unknown> => {
  if (typeof body !== 'string') return (body ?? {}) as Record<string, unknown>;
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
};

// A careful client: every POST carries its own Idempotency-Key, so that a retry would be safe (and the
// platform pays for the idempotency record, as it would in production).
const withIdempotencyKey = (params: RequestParams, key = randomUUID()) => {
  params.headers = { ...params.headers, 'idempotency-key': key };
};

const withToken = (params: RequestParams, token: string) => {
  params.headers = { ...params.headers, authorization: `Bearer ${token}` };
};

/** A shop token for a new `sub`, from the local issuer (one RSA signature on the cloud's thread). */
async function newCallerToken(endpoint: string, sub: string): Promise<string> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sub, scope: 'commerce/shop' }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`${endpoint} → ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A new customer registers itself, with a token of its own `sub` (on a stage: the operator registers it for one). */
export function newCustomer(params: RequestParams, context: Context, _events: Events, next: Next) {
  const n = randomUUID().slice(0, 8);
  const sub = `load-new-${randomUUID()}`;
  params.json = { name: `Load ${n}`, email: `load-${n}@example.com` };
  withIdempotencyKey(params);
  const tokenEndpoint = settings
    ? settings.tokenEndpoint
    : (context.vars.tokenEndpoint as string | undefined);
  if (!tokenEndpoint) {
    params.json = { ...(params.json as object), ownerSub: sub };
    withToken(params, settings ? settings.adminToken : String(context.vars.adminToken));
    return next();
  }
  newCallerToken(tokenEndpoint, sub).then(
    (token) => {
      withToken(params, token);
      next();
    },
    (error: Error) => next(error),
  );
}

/** The reservation's product, and the seeded customer who holds it. */
export function pickProduct(context: Context, _events: Events, next: Next) {
  context.vars.productId = pick(productIdsOf(context));
  const { customerId, token } = customerOf(context);
  context.vars.token = token;
  context.vars.reserver = customerId;
  next();
}

export function newReservation(params: RequestParams, context: Context, _events: Events, next: Next) {
  params.json = { quantity: 1 };
  const idempotencyKey = randomUUID();
  withIdempotencyKey(params, idempotencyKey);
  withToken(params, String(context.vars.token));
  const sent: ReservationLine = {
    idempotencyKey,
    productId: String(context.vars.productId),
    ...(typeof context.vars.reserver === 'string' ? { customerId: context.vars.reserver } : {}),
    quantity: 1,
    sentAt: Date.now(),
  };
  recordReservation(sent);
  context.vars.reservation = sent;
  next();
}

/** `afterResponse` of reserve_stock: the reservation's answer in the ledger, and its status checked. */
export function reservationAnswered(
  params: RequestParams & { name?: string },
  response: Response,
  context: Context,
  events: Events,
  next: Next,
) {
  const sent = context.vars.reservation as ReservationLine | undefined;
  if (sent && response.statusCode === 201) {
    const body = parse(response.body);
    recordReservation({
      ...sent,
      reservationId: String(body.reservationId),
      expiresAt: String(body.expiresAt),
    });
  } else if (sent && response.statusCode >= 400 && response.statusCode < 500) {
    recordReservation({ ...sent, refusedWith: response.statusCode });
  }
  expectStatus(params, response, context, events, next);
}

const recordReservation = (line: ReservationLine) => {
  if (settings?.reservationsFile) appendFileSync(settings.reservationsFile, `${JSON.stringify(line)}\n`);
};

/** Appends a line to the run's ledger. */
const record = (line: LedgerLine) => {
  if (settings) appendFileSync(settings.ledgerFile, `${JSON.stringify(line)}\n`);
};

export function newOrder(params: RequestParams, context: Context, _events: Events, next: Next) {
  const items = pickDistinct(productIdsOf(context), 1 + Math.floor(Math.random() * 3)).map((productId) => ({
    productId,
    quantity: 1,
  }));
  // The customer places its own order, with its own token (its polls too: `authorization` in the script).
  const { customerId, token } = customerOf(context);
  params.json = { customerId, items };
  const idempotencyKey = randomUUID();
  withIdempotencyKey(params, idempotencyKey);
  withToken(params, token);
  context.vars.authorization = `Bearer ${token}`;
  if (settings?.waitSeconds !== undefined)
    params.headers = { ...params.headers, ...preferWait(settings.waitSeconds) };
  const sent: LedgerLine = { idempotencyKey, customerId, items, placedAt: Date.now() };
  record(sent);
  context.vars.order = sent;
  context.vars.placedAt = sent.placedAt;
  context.vars.polling = 0;
  next();
}

/** The header of an order sent with `--wait N`. */
export const preferWait = (seconds: number) => ({ prefer: `wait=${seconds}` });

/** The end of a followed saga: how long from placing the order until it was seen final, and how it ended. */
function sagaEnded(order: Record<string, unknown>, context: Context, events: Events) {
  const elapsed = Date.now() - Number(context.vars.placedAt);
  context.vars.polling = 0;
  events.emit('histogram', 'saga.end_to_end', elapsed);
  const reason = typeof order.cancellationReason === 'string' ? `.${order.cancellationReason}` : '';
  events.emit('counter', `saga.outcome.${String(order.status)}${reason}`, 1);
  if (elapsed > tunable(context, 'sagaLimitMs')) events.emit('counter', 'saga.missed_limit', 1);
}

const isFinal = (order: Record<string, unknown>) =>
  order.status === 'CONFIRMED' || order.status === 'CANCELLED';

export function orderPlaced(
  _params: RequestParams,
  response: Response,
  context: Context,
  events: Events,
  next: Next,
) {
  const order = parse(response.body);
  const orderId = order.orderId;
  // 201 only answers an order sent with `Prefer: wait=N` whose saga ended within N s: it is final.
  const answeredFinal = response.statusCode === 201 && isFinal(order);
  if ((response.statusCode !== 202 && !answeredFinal) || typeof orderId !== 'string') {
    // A refusal is an answer that placed nothing (a 429 had no effect): sending the order again after
    // the run would place an order the load never placed.
    if (response.statusCode >= 400 && response.statusCode < 500) {
      record({ ...(context.vars.order as LedgerLine), refusedWith: response.statusCode });
    }
    return next(unexpected('place_order', response.statusCode));
  }
  record({ ...(context.vars.order as LedgerLine), orderId });
  context.vars.orderId = orderId;
  // Chosen before its answer is looked at, so that the followed orders stay a fair sample of all of them.
  if (Math.random() < tunable(context, 'pollFraction')) {
    events.emit('counter', 'saga.followed', 1);
    if (answeredFinal) {
      events.emit('counter', 'saga.answered_final', 1);
      sagaEnded(order, context, events);
    } else context.vars.polling = 1;
  }
  next();
}

/** The poll loop's pause; a no-op for orders that are not followed (Artillery runs a loop body once). */
export function pauseBeforePoll(context: Context, _events: Events, next: Next) {
  if (context.vars.polling !== 1) return next();
  setTimeout(() => next(), tunable(context, 'pollIntervalMs'));
}

export function orderPolled(
  _params: RequestParams,
  response: Response,
  context: Context,
  events: Events,
  next: Next,
) {
  const elapsed = Date.now() - Number(context.vars.placedAt);
  const order = parse(response.body);
  if (response.statusCode === 200 && order.status !== 'PENDING' && typeof order.status === 'string') {
    sagaEnded(order, context, events);
  } else if (elapsed > tunable(context, 'sagaLimitMs')) {
    context.vars.polling = 0;
    events.emit('counter', 'saga.missed_limit', 1);
    events.emit('counter', 'saga.not_final_when_given_up', 1);
  }
  next(unexpected('get_order', response.statusCode));
}

export function stillPolling(context: Context, next: (more: boolean) => void) {
  next(context.vars.polling === 1);
}
