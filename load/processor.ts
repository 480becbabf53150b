/**
 * Artillery's processor for the profiles' scenarios (bundled by Artillery
 * with esbuild and loaded in each of its worker threads). It picks the
 * seeded ids, builds the request bodies, writes every placed order to the
 * run's ledger (the invariant checks read it afterwards), and measures the
 * saga end to end for the orders chosen to be followed: placed → the first
 * poll that sees the order final, or (with `waitSeconds`, orders sent with
 * `Prefer: wait=N`) placed → the POST's own answer when it is `201` final.
 *
 * Its settings come from the file named by LOAD_SETTINGS, written by the
 * runner for each level (see artillery.ts).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';

export interface ProcessorSettings {
  /** The seeded customers and each one's shop token (its owner's): it places its own orders and holds stock. */
  readonly customers: readonly { readonly customerId: string; readonly token: string }[];
  /**
   * Where a new customer (the create_customer scenario) gets a token of a `sub` of its own, to register
   * itself: the local issuer's POST /_local/token. Unset (a stage): it is created by the operator's
   * token for a new `ownerSub`.
   */
  readonly tokenEndpoint?: string;
  /** The operator's token (a stage's new customers). */
  readonly adminToken: string;
  readonly productIds: readonly string[];
  /** Share of placed orders whose saga is followed by polling (0..1). */
  readonly pollFraction: number;
  readonly pollIntervalMs: number;
  /** A followed saga not final within this is counted as missing the limit. */
  readonly sagaLimitMs: number;
  /** JSON lines, one per placed order. */
  readonly ledgerFile: string;
  /** Orders are sent with `Prefer: wait=N`; unset, without the header. */
  readonly waitSeconds?: number;
}

/**
 * One line per order sent (without `orderId`) and one per order acknowledged
 * (with it) or refused (with `refusedWith`), tied by the request's
 * Idempotency-Key: an order the platform placed but whose answer the client
 * never saw (a timeout) is recovered after the run by sending the same
 * request again, which idempotency answers with the first response.
 */
export interface LedgerLine {
  readonly idempotencyKey: string;
  readonly orderId?: string;
  /** The status of an answer that placed nothing (a 4xx such as `429`): the order is not recovered. */
  readonly refusedWith?: number;
  readonly customerId: string;
  readonly items: readonly { productId: string; quantity: number }[];
  /** Epoch ms when the POST was sent. */
  readonly placedAt: number;
}

// The subset of Artillery's processor API used here.
interface Vars {
  [name: string]: unknown;
}
interface Context {
  vars: Vars;
}
interface RequestParams {
  json?: unknown;
  headers?: Record<string, string>;
}
interface Response {
  statusCode: number;
  body: unknown;
}
interface Events {
  emit(kind: 'counter' | 'histogram', name: string, value: number): void;
}
type Next = (error?: Error) => void;

const settings = JSON.parse(readFileSync(process.env.LOAD_SETTINGS ?? '', 'utf8')) as ProcessorSettings;

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
export function newCustomer(params: RequestParams, _context: Context, _events: Events, next: Next) {
  const n = randomUUID().slice(0, 8);
  const sub = `load-new-${randomUUID()}`;
  params.json = { name: `Load ${n}`, email: `load-${n}@example.com` };
  withIdempotencyKey(params);
  if (!settings.tokenEndpoint) {
    params.json = { ...(params.json as object), ownerSub: sub };
    withToken(params, settings.adminToken);
    return next();
  }
  newCallerToken(settings.tokenEndpoint, sub).then(
    (token) => {
      withToken(params, token);
      next();
    },
    (error: Error) => next(error),
  );
}

/** The reservation's product, and the seeded customer who holds it. */
export function pickProduct(context: Context, _events: Events, next: Next) {
  context.vars.productId = pick(settings.productIds);
  context.vars.token = pick(settings.customers).token;
  next();
}

export function newReservation(params: RequestParams, context: Context, _events: Events, next: Next) {
  params.json = { quantity: 1 };
  withIdempotencyKey(params);
  withToken(params, String(context.vars.token));
  next();
}

/** Appends a line to the run's ledger. */
const record = (line: LedgerLine) => appendFileSync(settings.ledgerFile, `${JSON.stringify(line)}\n`);

export function newOrder(params: RequestParams, context: Context, _events: Events, next: Next) {
  const items = pickDistinct(settings.productIds, 1 + Math.floor(Math.random() * 3)).map((productId) => ({
    productId,
    quantity: 1,
  }));
  // The customer places its own order, with its own token (its polls too: `authorization` in the script).
  const { customerId, token } = pick(settings.customers);
  params.json = { customerId, items };
  const idempotencyKey = randomUUID();
  withIdempotencyKey(params, idempotencyKey);
  withToken(params, token);
  context.vars.authorization = `Bearer ${token}`;
  if (settings.waitSeconds !== undefined)
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
  if (elapsed > settings.sagaLimitMs) events.emit('counter', 'saga.missed_limit', 1);
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
    return next();
  }
  record({ ...(context.vars.order as LedgerLine), orderId });
  context.vars.orderId = orderId;
  // Chosen before its answer is looked at, so that the followed orders stay a fair sample of all of them.
  if (Math.random() < settings.pollFraction) {
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
  setTimeout(() => next(), settings.pollIntervalMs);
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
  } else if (elapsed > settings.sagaLimitMs) {
    context.vars.polling = 0;
    events.emit('counter', 'saga.missed_limit', 1);
    events.emit('counter', 'saga.not_final_when_given_up', 1);
  }
  next();
}

export function stillPolling(context: Context, next: (more: boolean) => void) {
  next(context.vars.polling === 1);
}
