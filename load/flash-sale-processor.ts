/**
 * Artillery's processor for `load/flash-sale.yml`: a flash sale as an
 * Artillery script, at the rates Artillery can drive (the full benchmark,
 * hundreds of thousands of requests, is `npm run flash-sale`'s own client).
 *
 * - `before` (once, in Artillery's main thread): `createSale` creates the
 *   sale's products as the operator, `saleUnits` units split over
 *   `saleProducts` products, and hands their ids to every virtual user.
 * - Each virtual user is a shopper of its own (`beforeScenario: newShopper`):
 *   locally a token minted for a fresh `sub` by the local cloud's issuer; on a
 *   stage a token of COMMERCE_SHOP_TOKENS, else the operator's (who may act
 *   for anyone, and whom the per-caller hold limit does not bound). It sends
 *   one reservation of one unit; `saleAnswered` counts it: `201` reserved,
 *   `409 INSUFFICIENT_STOCK` sold out, anything else fails the virtual user
 *   (so ensure's maxErrorRate counts it).
 * - `after` (once): `checkSale` reads each product through the API and fails
 *   the run (exit 1) unless `available + reserved + sold` is what it received
 *   and no unit was reserved twice (the sale's products are new: their
 *   `reserved + sold` is at most their units).
 */
import { randomUUID } from 'node:crypto';
import type { Context, Events, Next, RequestParams, Response } from './processor';
import {
  ADMIN,
  type Caller,
  localAwsEndpoint,
  localToken,
  SHOP,
  stageTokens,
  type TokenSource,
} from './tokens';

let stage: TokenSource | undefined;
let stageShoppers: Caller[] | undefined;

/** The issuer of the script's environment (its `issuer` variable), as the mix's processor reads it. */
function issuerOf(context: Context): 'local' | 'client-credentials' {
  const issuer = String(context.vars.issuer);
  if (issuer !== 'local' && issuer !== 'client-credentials')
    throw new Error(`the script's variable issuer must be local or client-credentials, not ${issuer}`);
  return issuer;
}

async function operatorToken(context: Context): Promise<string> {
  if (issuerOf(context) === 'local')
    return localToken(localAwsEndpoint(String(context.vars.target)), 'load-operator', ADMIN);
  stage ??= stageTokens();
  return stage.admin();
}

const wholeNumber = (context: Context, name: string) => {
  const n = Number(context.vars[name]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`the script's variable ${name} must be a positive integer`);
  return n;
};

async function api(context: Context, method: 'GET' | 'POST', path: string, token: string, body?: unknown) {
  const response = await fetch(`${String(context.vars.target).replace(/\/$/, '')}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** `before`: the sale's products, `saleUnits` split evenly over `saleProducts`. */
export function createSale(context: Context, _events: Events, next: Next) {
  (async () => {
    const units = wholeNumber(context, 'saleUnits');
    const count = wholeNumber(context, 'saleProducts');
    const per = Math.floor(units / count);
    if (per * count !== units) throw new Error(`${units} units do not split evenly over ${count} products`);
    const token = await operatorToken(context);
    const label = randomUUID().slice(0, 8);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const r = await api(context, 'POST', '/products', token, {
        sku: `FLASH-${label}-${i}`,
        name: `Flash sale ${label} ${i}`,
        priceCents: 1000,
        stock: per,
      });
      if (r.status !== 201)
        throw new Error(`sale product not created: ${r.status} ${JSON.stringify(r.body)}`);
      ids.push(String(r.body.productId));
    }
    context.vars.saleProductIds = ids;
    context.vars.saleUnitsPerProduct = per;
    console.log(`flash sale: ${count} products of ${per} units (${ids.join(', ')})`);
  })().then(
    () => next(),
    (error: Error) => next(error),
  );
}

/** `beforeScenario`: a shopper of its own and the product it goes for (round robin would need state; at random). */
export function newShopper(context: Context, _events: Events, next: Next) {
  (async () => {
    const ids = context.vars.saleProductIds as string[] | undefined;
    if (!ids?.length) throw new Error('no sale products: the script’s before hook (createSale) did not run');
    context.vars.productId = ids[Math.floor(Math.random() * ids.length)];
    if (issuerOf(context) === 'local') {
      // One token per virtual user: every shopper is a `sub` of its own, so none meets the hold limit.
      context.vars.token = await localToken(
        localAwsEndpoint(String(context.vars.target)),
        `flash-${randomUUID()}`,
        SHOP,
      );
    } else {
      stage ??= stageTokens();
      stageShoppers ??= process.env.COMMERCE_SHOP_TOKENS ? await stage.shopCallers(1, 'flash') : [];
      context.vars.token =
        stageShoppers.length > 0
          ? stageShoppers[Math.floor(Math.random() * stageShoppers.length)]!.token
          : await stage.admin();
    }
  })().then(
    () => next(),
    (error: Error) => next(error),
  );
}

export function saleReservation(params: RequestParams, context: Context, _events: Events, next: Next) {
  params.json = { quantity: 1 };
  params.headers = {
    ...params.headers,
    authorization: `Bearer ${String(context.vars.token)}`,
    'idempotency-key': randomUUID(),
  };
  next();
}

const errorCode = (body: unknown): string => {
  try {
    const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { error?: { code?: unknown } };
    return String(parsed?.error?.code ?? '');
  } catch {
    return '';
  }
};

/** The answers a sale expects: a unit reserved, or sold out. Anything else fails the virtual user. */
export function saleAnswered(
  _params: RequestParams,
  response: Response,
  _context: Context,
  events: Events,
  next: Next,
) {
  if (response.statusCode === 201) {
    events.emit('counter', 'flash_sale.reserved', 1);
    return next();
  }
  const code = errorCode(response.body);
  if (response.statusCode === 409 && code === 'INSUFFICIENT_STOCK') {
    events.emit('counter', 'flash_sale.sold_out', 1);
    return next();
  }
  next(new Error(`reservation answered ${response.statusCode} ${code}`.trim()));
}

/** `after`: every sale product's stock adds up, and none reserved or sold more units than it had. */
export function checkSale(context: Context, _events: Events, next: Next) {
  (async () => {
    const ids = (context.vars.saleProductIds as string[] | undefined) ?? [];
    const per = Number(context.vars.saleUnitsPerProduct);
    const token = await operatorToken(context);
    const broken: string[] = [];
    let taken = 0;
    for (const id of ids) {
      const r = await api(context, 'GET', `/products/${id}`, token);
      const { available, reserved, sold } = r.body as {
        available?: number;
        reserved?: number;
        sold?: number;
      };
      if (r.status !== 200 || available === undefined || reserved === undefined || sold === undefined) {
        broken.push(`${id}: GET answered ${r.status}`);
        continue;
      }
      taken += reserved + sold;
      if (available + reserved + sold !== per || available < 0)
        broken.push(`${id}: available ${available} + reserved ${reserved} + sold ${sold} ≠ ${per} received`);
    }
    console.log(`flash sale: ${taken} of ${per * ids.length} units reserved or sold`);
    if (broken.length > 0) {
      console.error(`flash sale: stock does not add up:\n${broken.map((b) => `- ${b}`).join('\n')}`);
      // How Artillery's own checks (its ensure plugin) fail a run.
      const artillery = (globalThis as { artillery?: { suggestedExitCode?: number } }).artillery;
      if (artillery) artillery.suggestedExitCode = 1;
      else process.exitCode = 1;
    }
  })().then(
    () => next(),
    (error: Error) => next(error),
  );
}
