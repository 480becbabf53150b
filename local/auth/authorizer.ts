import type { IncomingHttpHeaders } from 'node:http';
import { type Assembly, type Resolve, resourcesOfType } from '../assembly';
import { type JwtExpectation, verifyJwt } from './verify';

/** An `AWS::ApiGatewayV2::Authorizer` of type JWT, resolved locally. */
export interface JwtAuthorizerSpec {
  readonly logicalId: string;
  readonly issuer: string;
  readonly audiences: readonly string[];
  /** The request header its identity source names, lower-cased (`authorization`). */
  readonly header: string;
}

/** A route's authorization, as its `AWS::ApiGatewayV2::Route` says. */
export type RouteAuthorization =
  | { readonly type: 'NONE' }
  | { readonly type: 'JWT'; readonly authorizer: JwtAuthorizerSpec; readonly scopes: readonly string[] };

/**
 * The template's JWT authorizers. Another kind (a Lambda authorizer, IAM) is
 * a start-up error: the local cloud would otherwise let through what AWS refuses.
 */
export function jwtAuthorizers(assembly: Assembly, resolve: Resolve): Map<string, JwtAuthorizerSpec> {
  const specs = new Map<string, JwtAuthorizerSpec>();
  for (const [logicalId, r] of resourcesOfType(assembly.template, 'AWS::ApiGatewayV2::Authorizer')) {
    const p = r.Properties ?? {};
    if (p.AuthorizerType !== 'JWT') {
      throw new Error(
        `authorizer ${logicalId}: only JWT authorizers run locally, not ${String(p.AuthorizerType)}`,
      );
    }
    const jwt = resolve(p.JwtConfiguration) as { Issuer?: unknown; Audience?: unknown } | undefined;
    const sources = (resolve(p.IdentitySource) ?? []) as unknown[];
    const header = sources.length === 1 ? /^\$request\.header\.(.+)$/.exec(String(sources[0])) : null;
    if (typeof jwt?.Issuer !== 'string' || !Array.isArray(jwt.Audience) || jwt.Audience.length === 0) {
      throw new Error(`authorizer ${logicalId}: JwtConfiguration needs an Issuer and an Audience`);
    }
    if (!header) {
      throw new Error(
        `authorizer ${logicalId}: only one $request.header.<name> identity source runs locally`,
      );
    }
    specs.set(logicalId, {
      logicalId,
      issuer: jwt.Issuer,
      audiences: jwt.Audience.map(String),
      header: header[1]!.toLowerCase(),
    });
  }
  return specs;
}

/** A route's `AuthorizationType`, `AuthorizerId` and `AuthorizationScopes`, checked against the authorizers. */
export function routeAuthorization(
  routeKey: string,
  properties: Record<string, unknown>,
  authorizers: ReadonlyMap<string, JwtAuthorizerSpec>,
): RouteAuthorization {
  const type = properties.AuthorizationType ?? 'NONE';
  if (type === 'NONE') return { type: 'NONE' };
  if (type !== 'JWT') throw new Error(`route ${routeKey}: authorization ${String(type)} is not run locally`);
  const ref = (properties.AuthorizerId as { Ref?: string } | undefined)?.Ref;
  const authorizer = ref === undefined ? undefined : authorizers.get(ref);
  if (!authorizer)
    throw new Error(`route ${routeKey}: its AuthorizerId names no JWT authorizer of the template`);
  const scopes = properties.AuthorizationScopes;
  return { type: 'JWT', authorizer, scopes: Array.isArray(scopes) ? scopes.map(String) : [] };
}

/** What the gateway puts in `requestContext.authorizer` for a JWT route (payload format 2.0). */
export interface JwtContext {
  readonly jwt: { readonly claims: Record<string, string>; readonly scopes: readonly string[] };
}

/** A refusal the gateway answers itself, before any function runs. */
export interface GatewayRefusal {
  readonly status: 401 | 403;
  readonly body: { message: 'Unauthorized' | 'Forbidden' };
  readonly headers: Record<string, string>;
}

export type Authorization = { readonly context?: JwtContext } | { readonly refusal: GatewayRefusal };

/**
 * Claims as API Gateway hands them to a function: every value a string
 * (numbers and booleans written out, a list as `[a b]`, an object as JSON).
 */
export function claimsAsStrings(claims: Record<string, unknown>): Record<string, string> {
  const text = (v: unknown): string =>
    typeof v === 'string'
      ? v
      : Array.isArray(v)
        ? `[${v.map(text).join(' ')}]`
        : v !== null && typeof v === 'object'
          ? JSON.stringify(v)
          : String(v);
  return Object.fromEntries(Object.entries(claims).map(([k, v]) => [k, text(v)]));
}

const unauthorized = (reason: string): { refusal: GatewayRefusal } => ({
  refusal: {
    status: 401,
    body: { message: 'Unauthorized' },
    headers: { 'www-authenticate': `Bearer error="invalid_token" error_description="${reason}"` },
  },
});

/**
 * The gateway's check of one request on one route: a route without
 * authorization passes with no context; on a JWT route the token (with or
 * without `Bearer `) must verify (else 401) and hold one of the route's
 * scopes when it lists any (else 403).
 */
export function authorizeRequest(
  route: RouteAuthorization,
  headers: IncomingHttpHeaders,
  keysOf: (authorizer: JwtAuthorizerSpec) => JwtExpectation['keys'],
  nowSeconds = Date.now() / 1000,
): Authorization {
  if (route.type === 'NONE') return {};
  const { authorizer } = route;
  const raw = headers[authorizer.header];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return unauthorized('the request has no token');
  const token = /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '') : value;
  const verdict = verifyJwt(
    token,
    { issuer: authorizer.issuer, audiences: authorizer.audiences, keys: keysOf(authorizer) },
    nowSeconds,
  );
  if (!verdict.valid) return unauthorized(verdict.reason);
  if (route.scopes.length > 0 && !route.scopes.some((s) => verdict.scopes.includes(s))) {
    return {
      refusal: {
        status: 403,
        body: { message: 'Forbidden' },
        headers: {
          'www-authenticate': `Bearer scope="${route.scopes.join(' ')}" error="insufficient_scope" error_description="expected scopes: [${route.scopes.join(' ')}]"`,
        },
      },
    };
  }
  return { context: { jwt: { claims: claimsAsStrings(verdict.claims), scopes: verdict.scopes } } };
}
