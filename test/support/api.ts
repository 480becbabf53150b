/**
 * A small client for the platform's HTTP API, as an outside client sees it.
 * Every answer it receives is checked against the OpenAPI document
 * (./contract.ts): a test that received one outside it fails. Every request
 * carries a token from the local cloud's issuer: the operator's (scope
 * commerce/admin) unless it names another (`shopCaller`, or its own
 * `authorization` header), and a fresh Idempotency-Key where the contract
 * requires one.
 */
import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import { isBusy, itemWrites, type QuiescenceStats, waitForQuiescence } from '../../load/quiescence';
import type { paths } from '../../openapi/schema';
import { checkAnswer } from './contract';

export const apiUrl = () => {
  const url = process.env.LOCAL_API_URL;
  if (!url)
    throw new Error('LOCAL_API_URL is not set: run the integration project (it starts the local cloud)');
  return url;
};

export const awsEndpoint = () => process.env.LOCAL_AWS_ENDPOINT!;

export const SHOP = 'commerce/shop';
export const ADMIN = 'commerce/admin';

const tokens = new Map<string, Promise<string>>();

/**
 * A token from the local cloud's issuer (POST /_local/token on its AWS
 * endpoint), cached per `sub` and scope; `expiresIn` < 0 mints one that has
 * already expired. `endpoint` defaults to the suite's cloud.
 */
export function tokenFor(sub: string, scope = SHOP, options: { expiresIn?: number; endpoint?: string } = {}) {
  const endpoint = options.endpoint ?? awsEndpoint();
  const key = `${endpoint} ${sub} ${scope} ${options.expiresIn ?? ''}`;
  let token = tokens.get(key);
  if (!token) {
    token = (async () => {
      const response = await fetch(`${endpoint}/_local/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sub,
          scope,
          ...(options.expiresIn === undefined ? {} : { expiresIn: options.expiresIn }),
        }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!body.access_token)
        throw new Error(`no token for ${sub}: ${response.status} ${JSON.stringify(body)}`);
      return body.access_token;
    })();
    tokens.set(key, token);
    // A failed mint is not cached.
    token.catch(() => tokens.delete(key));
  }
  return token;
}

/** The suite's operator: the token every request carries unless it names another caller. */
export const adminToken = (endpoint?: string) =>
  tokenFor('test-operator', ADMIN, endpoint === undefined ? {} : { endpoint });

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Headers of a request: `undefined` leaves a header out, including the ones
 * added by default (the operator's `authorization`; an `idempotency-key` on
 * the POSTs the contract requires one on).
 */
export type RequestHeaders = Record<string, string | undefined>;

/** The contract requires a key on these (api.md, Conventions): the helpers send a fresh one unless told. */
const KEY_REQUIRED = /^\/orders$|^\/products\/[^/]+\/reservations$/;

/**
 * `headers` with the defaults added (see RequestHeaders), for a request sent by other means (a raw
 * `fetch`); `endpoint` is the AWS endpoint of the cloud whose issuer signs (default: the suite's).
 */
export async function withDefaults(
  method: string,
  path: string,
  headers: RequestHeaders = {},
  endpoint?: string,
): Promise<Record<string, string>> {
  const all: RequestHeaders = {
    ...(method === 'POST' && KEY_REQUIRED.test(path.split('?')[0]!)
      ? { 'idempotency-key': `test-${randomUUID()}` }
      : {}),
    ...('authorization' in headers ? {} : bearer(await adminToken(endpoint))),
    ...headers,
  };
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
}

export interface ApiResponse<T = Record<string, unknown>> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

async function send<T>(
  method: string,
  path: string,
  body: unknown,
  headers: RequestHeaders,
  inContract: boolean,
): Promise<ApiResponse<T>> {
  const raw = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${apiUrl()}${path}`, {
    method,
    headers: {
      ...(raw !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(await withDefaults(method, path, headers)),
    },
    ...(raw !== undefined ? { body: raw } : {}),
  });
  const text = await response.text();
  if (inContract) checkAnswer({ method, path, status: response.status, headers: response.headers, text });
  const json = /json/.test(response.headers.get('content-type') ?? '');
  // A page (GET /docs) comes back as its text.
  const parsed = json ? (text ? JSON.parse(text) : {}) : text;
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** A request to the API; its answer must be one the OpenAPI document describes. */
export const call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  headers: RequestHeaders = {},
) => send<T>(method, path, body, headers, true);

/** A request the contract knowingly does not cover (a route the API does not have): its answer is not checked. */
export const callOutsideContract = <T = Record<string, unknown>>(method: string, path: string) =>
  send<T>(method, path, undefined, {}, false);

/** `fetch`, with every answer checked against the OpenAPI document. */
export const checkedFetch = async (input: Request): Promise<Response> => {
  const response = await fetch(input);
  const url = new URL(input.url);
  checkAnswer({
    method: input.method,
    path: url.pathname + url.search,
    status: response.status,
    headers: response.headers,
    text: await response.clone().text(),
  });
  return response;
};

/**
 * The typed client generated from the document (openapi-typescript types, openapi-fetch), checked as
 * `call` is, sending `token` (default: the operator's) through a middleware on every request.
 */
export const apiClient = (token?: string | Promise<string>) => {
  const client = createClient<paths>({ baseUrl: apiUrl(), fetch: checkedFetch });
  client.use({
    async onRequest({ request }) {
      if (!request.headers.has('authorization')) {
        request.headers.set('authorization', `Bearer ${await (token ?? adminToken())}`);
      }
      return request;
    },
  });
  return client;
};

export const post = <T = Record<string, unknown>>(path: string, body?: unknown, headers?: RequestHeaders) =>
  call<T>('POST', path, body, headers);
/**
 * A POST as a well-behaved client sends it under overload: a `429` (the local
 * cloud refuses at the edge what it cannot serve in time, having changed
 * nothing) is sent again after its `retry-after`, for up to `withinMs`.
 */
export const postRetryingThrottled = <T = Record<string, unknown>>(
  path: string,
  body?: unknown,
  headers: RequestHeaders = {},
  withinMs = 60_000,
) => postResending<T>(path, body, headers, { withinMs, afterServerErrors: false });

/**
 * A POST sent again, with the same `Idempotency-Key`, after a `429` (after its
 * `retry-after`) and, with `afterServerErrors`, after a 5xx (after a second):
 * a function that died before its answer is a 500 to its client, which sends
 * again to learn what became of its request. Sent for up to `withinMs`.
 */
export async function postResending<T = Record<string, unknown>>(
  path: string,
  body: unknown,
  headers: RequestHeaders,
  { withinMs = 60_000, afterServerErrors = true }: { withinMs?: number; afterServerErrors?: boolean } = {},
): Promise<ApiResponse<T>> {
  const deadline = Date.now() + withinMs;
  // The same key on every retry: a 429 had no effect, and a repeat must not do it twice.
  const keyed = KEY_REQUIRED.test(path) && !('idempotency-key' in headers);
  const sent = keyed ? { 'idempotency-key': `test-${randomUUID()}`, ...headers } : headers;
  for (;;) {
    const r = await call<T>('POST', path, body, sent);
    const again = r.status === 429 || (afterServerErrors && r.status >= 500);
    if (!again || Date.now() > deadline) return r;
    const seconds = r.status === 429 ? Number(r.headers.get('retry-after') ?? '1') : 1;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000 * (1 + Math.random())));
  }
}

export const get = <T = Record<string, unknown>>(path: string, headers?: RequestHeaders) =>
  call<T>('GET', path, undefined, headers);
export const del = <T = Record<string, unknown>>(path: string, headers?: RequestHeaders) =>
  call<T>('DELETE', path, undefined, headers);

/** A shop caller of its own `sub`: its token, and the helpers sending it. */
export async function shopCaller(sub = `shopper-${randomUUID()}`) {
  const token = await tokenFor(sub, SHOP);
  const as = (headers: RequestHeaders = {}) => ({ ...bearer(token), ...headers });
  return {
    sub,
    token,
    get: <T = Record<string, unknown>>(path: string, headers?: RequestHeaders) => get<T>(path, as(headers)),
    post: <T = Record<string, unknown>>(path: string, body?: unknown, headers?: RequestHeaders) =>
      post<T>(path, body, as(headers)),
    del: <T = Record<string, unknown>>(path: string, headers?: RequestHeaders) => del<T>(path, as(headers)),
  };
}

export async function createCustomer(overrides: Record<string, unknown> = {}) {
  const r = await post<{ customerId: string; availableCreditCents: number }>('/customers', {
    name: 'Test Customer',
    email: 'test@example.com',
    ...overrides,
  });
  if (r.status !== 201) throw new Error(`customer not created: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function createProduct(overrides: Record<string, unknown> = {}) {
  const r = await post<{
    productId: string;
    available: number;
    reserved: number;
    sold: number;
    priceCents: number;
  }>('/products', {
    sku: `SKU-${Math.random().toString(36).slice(2, 10)}`,
    name: 'Widget',
    priceCents: 1250,
    stock: 100,
    ...overrides,
  });
  if (r.status !== 201) throw new Error(`product not created: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Polls `read` until `done` holds on its result, or fails after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await read();
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (Date.now() < deadline);
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}

/** The local cloud's own counters and wiring (served on its AWS endpoint). */
export async function localAdmin<T = Record<string, unknown>>(
  path: 'wiring' | 'stats' | 'reset-stats',
): Promise<T> {
  const response = await fetch(`${awsEndpoint()}/_local/${path}`);
  return (await response.json()) as T;
}

/** The read calls of every operation that `/_local/stats` counted on `table` (none for an unknown table). */
export const readCallsOf = (
  stats: { reads: Record<string, Record<string, number>> },
  table: string | undefined,
): number => Object.values((table !== undefined && stats.reads[table]) || {}).reduce((a, b) => a + b, 0);

/**
 * A measurement on the whole cloud's counters, taken again while `disturbed`
 * says another caller (a scheduled run: the expirer, the sweeper) added to
 * them in its window, at most `tries` times; the last is returned for the
 * test to judge, so a measurement disturbed every time still fails.
 */
export async function undisturbed<T>(
  measure: () => Promise<T>,
  disturbed: (measured: T) => boolean,
  tries = 3,
): Promise<T> {
  let measured = await measure();
  for (let n = 1; n < tries && disturbed(measured); n++) measured = await measure();
  return measured;
}

/**
 * Item writes per table once the cloud is quiescent (load/quiescence.ts:
 * nothing on its way, and no write for `stillMs`), so that every write an
 * earlier request caused has landed. Tables whose name matches `leaveOut`
 * are not counted.
 */
export async function quiescentWrites(leaveOut?: RegExp, stillMs = 100, timeoutMs = 30_000) {
  const { quiet, stats, writes } = await waitForQuiescence(() => localAdmin<QuiescenceStats>('stats'), {
    stillMs,
    everyMs: 50,
    timeoutMs,
    ...(leaveOut ? { leaveOut } : {}),
  });
  if (!quiet)
    throw new Error(`the cloud did not become quiescent: ${JSON.stringify({ busy: isBusy(stats), writes })}`);
  return writes;
}

/**
 * `quiescentWrites()` when the cloud was last seen quiescent at `seen`: one reading that finds
 * nothing on its way and exactly those writes is that same quiescent state, with no wait; anything
 * else waits for quiescence as `quiescentWrites` does.
 */
export async function stillQuiescent(seen: Record<string, number> | undefined) {
  if (seen !== undefined) {
    const stats = await localAdmin<QuiescenceStats>('stats');
    const writes = itemWrites(stats);
    if (!isBusy(stats) && JSON.stringify(writes) === JSON.stringify(seen)) return writes;
  }
  return quiescentWrites();
}

/** Injects failures into saga steps of the local cloud (an empty list clears them). */
export async function setFaults(
  rules: { state: string; rate: number; error?: string; delayMs?: number; times?: number }[],
) {
  const response = await fetch(`${awsEndpoint()}/_local/faults`, {
    method: 'POST',
    body: JSON.stringify(rules),
  });
  if (!response.ok) throw new Error(`faults not set: ${response.status} ${await response.text()}`);
}

/** Invokes a local function directly, as `aws lambda invoke` would. */
export async function invokeFunction(logicalIdPrefix: string, payload: unknown) {
  const { functions } = await localAdmin<{ functions: string[] }>('wiring');
  const name = functions.find((f) => f.startsWith(logicalIdPrefix));
  if (!name) throw new Error(`no function ${logicalIdPrefix}*`);
  const response = await fetch(`${awsEndpoint()}/2015-03-31/functions/${name}/invocations`, {
    method: 'POST',
    body: JSON.stringify(payload),
  });
  return {
    status: response.status,
    error: response.headers.get('x-amz-function-error'),
    body: await response.json(),
  };
}

export interface OrderView {
  orderId: string;
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED';
  cancellationReason?: string;
  paymentId?: string;
  totalCents: number;
}

/** Places an order and waits until it is final. */
export async function placeAndSettle(customerId: string, items: { productId: string; quantity: number }[]) {
  const placed = await post<{ orderId: string; status: string }>('/orders', { customerId, items });
  if (placed.status !== 202)
    throw new Error(`order not placed: ${placed.status} ${JSON.stringify(placed.body)}`);
  return (await settledOrder(placed.body.orderId)).body;
}

/** An order's view once it is final (CONFIRMED or CANCELLED), read until then. */
export const settledOrder = (orderId: string, timeoutMs = 30_000) =>
  eventually(
    () => get<OrderView>(`/orders/${orderId}`),
    (r) => r.status === 200 && r.body.status !== 'PENDING',
    timeoutMs,
  );
