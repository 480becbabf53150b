/**
 * Where the tools' tokens come from (api.md, "Identity and access"; README,
 * "Who may do what"). Every route but GET /openapi.json and GET /docs needs
 * `Authorization: Bearer <JWT>`:
 *
 * - **Locally** the local cloud is the issuer: `POST {awsEndpoint}/_local/token`
 *   with `{"sub", "scope", "expiresIn"?}` mints a token for any `sub`, so each
 *   simulated customer acts with its own.
 * - **On a stage** the stage's issuer (its Cognito user pool, or the issuer it
 *   was configured with) gives an operator's token by the client credentials
 *   grant, from the environment:
 *
 *   COMMERCE_TOKEN_URL            the issuer's token endpoint (Cognito: https://<domain>.auth.<region>.amazoncognito.com/oauth2/token)
 *   COMMERCE_CLIENT_ID            the operators' app client (client credentials, scope commerce/admin)
 *   COMMERCE_CLIENT_SECRET        its secret
 *   COMMERCE_SHOP_TOKENS          optional: a file of shop access tokens, one per line, each a signed-in
 *                                 customer (Cognito's hosted UI or InitiateAuth); their `sub`s are read from them
 *
 *   Without shop tokens a stage run acts as the operator for every customer
 *   (an admin may act for anyone): the per-caller checks are then not exercised.
 */
import { readFileSync } from 'node:fs';

export const SHOP = 'commerce/shop';
export const ADMIN = 'commerce/admin';

/** A caller: the `sub` its token names, and the token. */
export interface Caller {
  readonly sub: string;
  readonly token: string;
}

export interface TokenSource {
  readonly kind: 'local' | 'stage';
  /** An operator's token (scope commerce/admin), renewed before it expires. */
  admin(): Promise<string>;
  /**
   * `count` shop callers of distinct `sub`s named from `prefix` (locally minted; on a stage the tokens
   * of COMMERCE_SHOP_TOKENS, or the operator for each when there are none).
   */
  shopCallers(count: number, prefix: string): Promise<Caller[]>;
  /**
   * The token of the caller `sub` (as shopCallers named it): locally minted; on a stage the shop token
   * of COMMERCE_SHOP_TOKENS with this `sub`, or else the operator's (who may act for anyone).
   */
  shop(sub: string): Promise<string>;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Long enough for the longest run (a soak, a full flash sale); the local issuer allows a day. */
const LOAD_TOKEN_SECONDS = 6 * 3600;

/** A token minted by the local cloud (POST /_local/token on its AWS endpoint). */
export async function localToken(
  awsEndpoint: string,
  sub: string,
  scope: string,
  expiresIn = LOAD_TOKEN_SECONDS,
): Promise<string> {
  const response = await fetch(`${awsEndpoint}/_local/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sub, scope, expiresIn }),
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string };
  if (response.status !== 200 || !body.access_token) {
    throw new Error(`POST ${awsEndpoint}/_local/token → ${response.status} ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

/**
 * The local cloud's AWS endpoint (its issuer) for an API `target`: LOCAL_AWS_ENDPOINT, else the API's port
 * plus one, where `npm start` serves it.
 */
export function localAwsEndpoint(target: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOCAL_AWS_ENDPOINT) return env.LOCAL_AWS_ENDPOINT.replace(/\/$/, '');
  const port = /^http:\/\/(?:127\.0\.0\.1|localhost):(\d+)\/?$/.exec(target)?.[1];
  if (!port) throw new Error(`set LOCAL_AWS_ENDPOINT: the target ${target} is not a local cloud's API`);
  return `http://127.0.0.1:${Number(port) + 1}`;
}

/** The claims of a token (not verified: the tools only read the `sub` of their own tokens). */
export function claimsOf(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export function localTokens(awsEndpoint: string): TokenSource {
  const shop = new Map<string, Promise<string>>();
  let admin: Promise<string> | undefined;
  const token = (sub: string) => {
    let t = shop.get(sub);
    if (!t) {
      t = localToken(awsEndpoint, sub, SHOP);
      shop.set(sub, t);
    }
    return t;
  };
  return {
    kind: 'local',
    admin: () => {
      admin ??= localToken(awsEndpoint, 'load-operator', ADMIN);
      return admin;
    },
    shop: token,
    async shopCallers(count, prefix) {
      const subs = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
      const callers: Caller[] = [];
      // Eight at a time: each is an RSA signature on the cloud's own thread.
      for (let i = 0; i < subs.length; i += 8) {
        const batch = subs.slice(i, i + 8);
        const tokens = await Promise.all(batch.map(token));
        batch.forEach((sub, j) => {
          callers.push({ sub, token: tokens[j]! });
        });
      }
      return callers;
    },
  };
}

/** An operator's token from a stage's issuer by the client credentials grant (RFC 6749 §4.4). */
export function stageTokens(env: NodeJS.ProcessEnv = process.env): TokenSource {
  const url = env.COMMERCE_TOKEN_URL;
  const clientId = env.COMMERCE_CLIENT_ID;
  const secret = env.COMMERCE_CLIENT_SECRET;
  if (!url || !clientId || !secret) {
    throw new Error(
      'a stage needs tokens from its issuer: set COMMERCE_TOKEN_URL, COMMERCE_CLIENT_ID and COMMERCE_CLIENT_SECRET ' +
        '(the operators’ client credentials; see README, "Who may do what")',
    );
  }
  let cached: { token: string; until: number } | undefined;
  const admin = async () => {
    if (cached && Date.now() < cached.until) return cached.token;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: ADMIN }).toString(),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await response.json().catch(() => ({}))) as { access_token?: string; expires_in?: number };
    if (!response.ok || !body.access_token)
      throw new Error(`${url} → ${response.status} ${JSON.stringify(body)}`);
    // Renewed a minute before it expires.
    cached = { token: body.access_token, until: Date.now() + ((body.expires_in ?? 3600) - 60) * 1000 };
    return cached.token;
  };
  const shopTokens = env.COMMERCE_SHOP_TOKENS
    ? readFileSync(env.COMMERCE_SHOP_TOKENS, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
    : [];
  const bySub = new Map(shopTokens.map((token) => [String(claimsOf(token).sub), token]));
  return {
    kind: 'stage',
    admin,
    shop: async (sub) => bySub.get(sub) ?? admin(),
    async shopCallers(count) {
      if (shopTokens.length === 0) {
        const token = await admin();
        return Array.from({ length: count }, (_, i) => ({ sub: `operator-${i}`, token }));
      }
      if (shopTokens.length < count) {
        throw new Error(`COMMERCE_SHOP_TOKENS holds ${shopTokens.length} tokens; this run needs ${count}`);
      }
      return shopTokens.slice(0, count).map((token) => ({ sub: String(claimsOf(token).sub), token }));
    },
  };
}

const sources = new WeakMap<object, TokenSource>();

/**
 * The tokens for a target: the local cloud's issuer when the target has its AWS endpoint, else the
 * stage's (the environment above). One source per target object (its tokens are cached).
 */
export function tokensFor(target: { readonly api: string; readonly awsEndpoint?: string }): TokenSource {
  let source = sources.get(target);
  if (!source) {
    // A local API without its counters (--no-counters) still has its issuer beside it, on its port plus one.
    const local = /^http:\/\/127\.0\.0\.1:(\d+)$/.exec(target.api);
    const endpoint = target.awsEndpoint ?? (local ? `http://127.0.0.1:${Number(local[1]) + 1}` : undefined);
    source = endpoint ? localTokens(endpoint) : stageTokens();
    sources.set(target, source);
  }
  return source;
}
