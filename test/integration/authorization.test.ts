/**
 * Who may do what (api.md, "Identity and access"; issue 40), against the
 * suite's local cloud, which enforces the template's JWT authorizer as API
 * Gateway does and is its issuer. Every route × every kind of caller: no
 * token, an expired one, a foreign issuer's, a foreign audience's, `alg:
 * none`, a tampered signature, the owner, another customer, an operator, and
 * a shop token on an admin route. Each answer is checked against the
 * contract (status, body; `call` checks it against the OpenAPI document too),
 * and after every refusal the records are re-read with an admin token and
 * must not have changed. The bad tokens are made here with node:crypto and
 * keys of the test's own.
 *
 * And personal data: a saga's Step Functions input and history (read through
 * the local Step Functions API) and the functions' logs name no customer's
 * email or name.
 */
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import { CACHE_DIR } from '@commerce/local-cloud';
import { STOCK_CACHE } from '../../functions/inventory/stock-cache';
import {
  ADMIN,
  adminToken,
  awsEndpoint,
  call,
  createProduct,
  get,
  localAdmin,
  quiescentWrites,
  type RequestHeaders,
  SHOP,
  shopCaller,
  tokenFor,
} from '../support/api';

const UNAUTHORIZED = { status: 401, body: { message: 'Unauthorized' } };
const FORBIDDEN = { status: 403, body: { message: 'Forbidden' } };
const NOT_FOUND = { status: 404, body: { error: { code: 'NOT_FOUND' } } };

interface Issuer {
  issuer: string;
  audience: string;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A JWT signed RS256 with `key` (or unsigned, for alg none): never the local issuer's key. */
function jwt(header: Record<string, unknown>, claims: Record<string, unknown>, key?: KeyObject) {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${key ? sign('sha256', Buffer.from(input), key).toString('base64url') : ''}`;
}

/** The bad tokens, each standing for a caller that holds the admin scope (so only the token's fault refuses it). */
async function badTokens(issuer: Issuer, ownerToken: string, otherSub: string) {
  const own = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const now = Math.floor(Date.now() / 1000);
  const [localHeader] = ownerToken.split('.');
  const kid = (JSON.parse(Buffer.from(localHeader!, 'base64url').toString()) as { kid: string }).kid;
  const claims = {
    iss: issuer.issuer,
    sub: 'mallory',
    aud: issuer.audience,
    client_id: issuer.audience,
    scope: `${SHOP} ${ADMIN}`,
    iat: now,
    exp: now + 600,
    jti: randomUUID(),
  };
  // The owner's token with the payload swapped for the other customer's sub and the admin scope.
  const [h, payload, signature] = ownerToken.split('.');
  const swapped = {
    ...(JSON.parse(Buffer.from(payload!, 'base64url').toString()) as object),
    sub: otherSub,
    scope: ADMIN,
  };
  return {
    'no token': undefined,
    expired: `Bearer ${await tokenFor(`expired-${randomUUID()}`, `${SHOP} ${ADMIN}`, { expiresIn: -60 })}`,
    'wrong issuer': `Bearer ${jwt({ alg: 'RS256', typ: 'JWT', kid: 'evil' }, { ...claims, iss: 'https://evil.example.com/' }, own)}`,
    'wrong audience': `Bearer ${jwt({ alg: 'RS256', typ: 'JWT', kid }, { ...claims, aud: 'someone-else', client_id: 'someone-else' }, own)}`,
    'alg none': `Bearer ${jwt({ alg: 'none', typ: 'JWT', kid }, claims)}`,
    'tampered signature': `Bearer ${h}.${b64(swapped)}.${signature}`,
  } as const;
}

/** What a route is asked, and by whom: each caller's expected answer. */
interface Row {
  readonly method: string;
  readonly path: () => string;
  readonly body?: (as: 'owner' | 'other' | 'admin') => unknown;
  readonly open?: boolean;
  readonly adminOnly?: boolean;
  readonly owner: Expected;
  readonly other: Expected;
  readonly admin: Expected;
}
type Expected = { status: number; body?: unknown };

/**
 * Waits until what earlier successes started (a saga, projections) has ended and the product's GET,
 * served from a sandbox's stock cache, shows it: else a stale `before` and a fresh `after` differ
 * with nothing changed in between.
 */
async function settled() {
  await quiescentWrites();
  await new Promise((resolve) => setTimeout(resolve, STOCK_CACHE.readMs));
}

describe('who may do what', () => {
  let issuer: Issuer;
  let owner: Awaited<ReturnType<typeof shopCaller>>;
  let other: Awaited<ReturnType<typeof shopCaller>>;
  let customerId: string;
  let othersCustomerId: string;
  let productId: string;
  let reservationId: string;
  let orderId: string;
  let paymentId: string;
  let name: string;
  let email: string;

  beforeAll(async () => {
    issuer = (await (await fetch(`${awsEndpoint()}/_local/issuer`)).json()) as Issuer;
    owner = await shopCaller();
    other = await shopCaller();
    const unique = randomUUID().slice(0, 8);
    name = `Zelda Quux${unique}`;
    email = `zelda.${unique}@example.com`;
    // Each registers itself with its own token.
    const mine = await owner.post<{ customerId: string }>('/customers', { name, email });
    expect(mine.status).toBe(201);
    customerId = mine.body.customerId;
    const theirs = await other.post<{ customerId: string }>('/customers', {
      name: 'Other Person',
      email: 'other@example.com',
    });
    expect(theirs.status).toBe(201);
    othersCustomerId = theirs.body.customerId;
    ({ productId } = await createProduct({ stock: 100, priceCents: 500 }));
    const held = await owner.post<{ reservationId: string }>(`/products/${productId}/reservations`, {
      quantity: 1,
    });
    expect(held.status).toBe(201);
    reservationId = held.body.reservationId;
    // customerId omitted: the caller's own.
    const placed = await owner.post<{ orderId: string; status: string; paymentId?: string }>(
      '/orders',
      { items: [{ productId, quantity: 1 }] },
      { prefer: 'wait=10' },
    );
    expect(placed.status).toBe(201);
    expect(placed.body.status).toBe('CONFIRMED');
    orderId = placed.body.orderId;
    paymentId = placed.body.paymentId!;
    // CONFIRMED is the order's answer, not the product's: the sale reaches the product's view through
    // the projector (and its GET through a sandbox's stock cache) later, and must not land inside the
    // first refusal the matrix judges.
    await settled();
  }, 60_000);

  /** Every record the matrix touches, read by an operator. */
  const snapshot = async () => {
    const paths = [
      `/customers/${customerId}`,
      `/customers/${othersCustomerId}`,
      `/products/${productId}`,
      `/orders/${orderId}`,
      `/orders/${orderId}/saga`,
      `/payments/${paymentId}`,
    ];
    return Object.fromEntries(await Promise.all(paths.map(async (p) => [p, (await get(p)).body] as const)));
  };

  const openToAll = { owner: { status: 200 }, other: { status: 200 }, admin: { status: 200 } };
  const rows = (): Row[] => [
    {
      method: 'POST',
      path: () => '/customers',
      body: (as) => ({ name: `New ${as}`, email: `${as}@example.com` }),
      // A second registration by the same sub.
      owner: { status: 409, body: { error: { code: 'CUSTOMER_EXISTS' } } },
      other: { status: 409, body: { error: { code: 'CUSTOMER_EXISTS' } } },
      admin: { status: 201 },
    },
    {
      method: 'GET',
      path: () => `/customers/${customerId}`,
      owner: { status: 200, body: { customerId, name, email } },
      other: NOT_FOUND,
      admin: { status: 200, body: { customerId } },
    },
    {
      method: 'GET',
      path: () => '/customers/me',
      owner: { status: 200, body: { customerId } },
      other: { status: 200, body: { customerId: othersCustomerId } },
      // The operator's sub registered no customer.
      admin: NOT_FOUND,
    },
    {
      method: 'POST',
      path: () => '/products',
      body: () => ({ sku: `AUTH-${randomUUID().slice(0, 8)}`, name: 'Gadget', priceCents: 100, stock: 1 }),
      adminOnly: true,
      owner: FORBIDDEN,
      other: FORBIDDEN,
      admin: { status: 201 },
    },
    {
      method: 'GET',
      path: () => `/products/${productId}`,
      owner: { status: 200, body: { productId } },
      other: { status: 200, body: { productId } },
      admin: { status: 200, body: { productId } },
    },
    {
      method: 'POST',
      path: () => `/products/${productId}/reservations`,
      body: () => ({ quantity: 1 }),
      owner: { status: 201, body: { productId, status: 'RESERVED' } },
      other: { status: 201, body: { productId, status: 'RESERVED' } },
      admin: { status: 201, body: { productId, status: 'RESERVED' } },
    },
    {
      method: 'POST',
      path: () => `/products/${productId}/restock`,
      body: () => ({ quantity: 1 }),
      adminOnly: true,
      owner: FORBIDDEN,
      other: FORBIDDEN,
      admin: { status: 200, body: { productId } },
    },
    {
      method: 'POST',
      path: () => '/orders',
      body: () => ({ customerId, items: [{ productId, quantity: 1 }] }),
      owner: { status: 202, body: { status: 'PENDING' } },
      // An order charged to another customer's credit: as if that customer did not exist.
      other: NOT_FOUND,
      admin: { status: 202, body: { status: 'PENDING' } },
    },
    {
      method: 'GET',
      path: () => `/orders/${orderId}`,
      owner: { status: 200, body: { orderId, customerId } },
      other: NOT_FOUND,
      admin: { status: 200, body: { orderId } },
    },
    {
      method: 'GET',
      path: () => `/orders/${orderId}/saga`,
      owner: { status: 200, body: { orderId, status: 'SUCCEEDED' } },
      other: NOT_FOUND,
      admin: { status: 200, body: { orderId } },
    },
    {
      method: 'GET',
      path: () => `/payments/${paymentId}`,
      owner: { status: 200, body: { paymentId, customerId } },
      other: NOT_FOUND,
      admin: { status: 200, body: { paymentId } },
    },
    {
      // Last: the owner's release changes the reservation (another's attempt must not).
      method: 'DELETE',
      path: () => `/products/${productId}/reservations/${reservationId}`,
      other: NOT_FOUND,
      owner: { status: 200, body: { reservationId, status: 'RELEASED' } },
      // Repeating a release answers the same.
      admin: { status: 200, body: { reservationId, status: 'RELEASED' } },
    },
    { method: 'GET', path: () => '/openapi.json', open: true, ...openToAll },
    { method: 'GET', path: () => '/docs', open: true, ...openToAll },
  ];

  test('the matrix covers every route of the template', async () => {
    const { routes } = await localAdmin<{ routes: string[] }>('wiring');
    const covered = rows().map((r) =>
      `${r.method} ${r.path()}`
        .replace(customerId, '{customerId}')
        .replace(`/orders/${orderId}`, '/orders/{orderId}')
        .replace(`/payments/${paymentId}`, '/payments/{paymentId}')
        .replace(`/products/${productId}`, '/products/{productId}')
        .replace(reservationId, '{reservationId}'),
    );
    expect([...covered].sort()).toEqual([...routes].sort());
  });

  test('every route × every caller answers as the contract says, and a refusal changes nothing', async () => {
    const bad = await badTokens(issuer, owner.token, other.sub);
    const admin = await adminToken();
    const seen: string[] = [];
    const expectAnswer = async (
      row: Row,
      who: string,
      authorization: string | undefined,
      expected: Expected,
    ) => {
      const before = await snapshot();
      const body = row.body?.(who === 'owner' || who === 'other' || who === 'admin' ? who : 'owner');
      const headers: RequestHeaders = { authorization };
      const r = await call(row.method, row.path(), body, headers);
      const answer = /json/.test(r.headers.get('content-type') ?? '') ? r.body : {};
      seen.push(`${row.method} ${row.path()} as ${who}: ${r.status}`);
      expect({ route: `${row.method} ${row.path()}`, who, status: r.status }).toEqual({
        route: `${row.method} ${row.path()}`,
        who,
        status: expected.status,
      });
      if (expected.body !== undefined) {
        if (expected.status === 401 || expected.status === 403) expect(answer).toEqual(expected.body);
        else expect(answer).toMatchObject(expected.body as object);
      }
      if (r.status >= 400) expect({ who, after: await snapshot() }).toEqual({ who, after: before });
      // What a success started must be seen before the next refusal is judged.
      else await settled();
    };
    for (const row of rows()) {
      for (const [kind, authorization] of Object.entries(bad)) {
        // An open route checks no token, whatever is sent.
        await expectAnswer(row, kind, authorization, row.open ? { status: 200 } : UNAUTHORIZED);
      }
      if (row.adminOnly)
        await expectAnswer(row, 'a shop token on an admin route', `Bearer ${owner.token}`, FORBIDDEN);
      const callers = { other: other.token, owner: owner.token, admin } as const;
      const order =
        row.method === 'DELETE'
          ? (['other', 'owner', 'admin'] as const)
          : (['owner', 'other', 'admin'] as const);
      for (const who of order) await expectAnswer(row, who, `Bearer ${callers[who]}`, row[who]);
    }
    expect(seen.length).toBeGreaterThan(rows().length * 9);
  }, 180_000);

  test('only an admin sets a credit limit or an owner: from a shop token 403 FORBIDDEN, nothing registered', async () => {
    const newcomer = await shopCaller();
    for (const extra of [{ creditLimitCents: 10 ** 9 }, { ownerSub: other.sub }]) {
      const r = await newcomer.post('/customers', { name: 'Greedy', email: 'greedy@example.com', ...extra });
      expect({ status: r.status, code: (r.body as { error?: { code?: string } }).error?.code }).toEqual({
        status: 403,
        code: 'FORBIDDEN',
      });
    }
    expect(await newcomer.get('/customers/me')).toMatchObject(NOT_FOUND);
  });

  test('idempotency keys are the caller’s: one key sent by two subs is two keys', async () => {
    const key = `shared-${randomUUID()}`;
    const a = await owner.post<{ reservationId: string }>(
      `/products/${productId}/reservations`,
      { quantity: 1 },
      { 'idempotency-key': key },
    );
    const b = await other.post<{ reservationId: string }>(
      `/products/${productId}/reservations`,
      { quantity: 1 },
      { 'idempotency-key': key },
    );
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.reservationId).not.toBe(b.body.reservationId);
  });

  test('POST /orders and reservations require an Idempotency-Key: 400 naming the header', async () => {
    for (const [path, body] of [
      ['/orders', { items: [{ productId, quantity: 1 }] }],
      [`/products/${productId}/reservations`, { quantity: 1 }],
    ] as const) {
      const r = await owner.post<{ error: { code: string; details: unknown[] } }>(path, body, {
        'idempotency-key': undefined,
      });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(r.body.error.details).toLowerCase()).toContain('idempotency-key');
    }
  });

  test('a saga’s Step Functions input and history, and the functions’ logs, hold no email or name', async () => {
    const trace = await get<{ executionArn: string }>(`/orders/${orderId}/saga`);
    const sfn = new SFNClient({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    try {
      const execution = await sfn.send(
        new DescribeExecutionCommand({ executionArn: trace.body.executionArn }),
      );
      const history = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: trace.body.executionArn }),
      );
      expect(history.events?.length).toBeGreaterThan(3);
      const text = JSON.stringify({ execution, history });
      // The order's customer is in it by id: the check reads the right execution.
      expect(text).toContain(customerId);
      for (const secret of [email, name, name.split(' ')[1]!]) expect(text).not.toContain(secret);
    } finally {
      sfn.destroy();
    }
    // The suite's cloud writes each function's log under its assembly's run directory (global-setup.ts).
    const logs = join(CACHE_DIR, 'run', 'assembly-test', 'logs');
    expect(existsSync(logs)).toBe(true);
    const files = readdirSync(logs).filter((f) => f.endsWith('.log'));
    expect(files.length).toBeGreaterThan(0);
    const all = files.map((f) => readFileSync(join(logs, f), 'utf8')).join('\n');
    for (const secret of [email, name.split(' ')[1]!]) expect(all).not.toContain(secret);
  });
});
