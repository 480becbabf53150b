import { SCOPES } from './seams';

/**
 * Who is calling, as the API's JWT authorizer vouched for it: the token's
 * `sub`, and whether it carries the operators' scope. A shop caller acts for
 * itself only; an admin for anyone (api.md, "Identity and access").
 */
export interface Caller {
  readonly sub: string;
  readonly isAdmin: boolean;
}

/** The part of an HTTP API (payload 2.0) event that carries the authorizer's verdict. */
export interface AuthorizedEvent {
  readonly requestContext?: {
    readonly authorizer?: {
      readonly jwt?: {
        readonly claims?: Readonly<Record<string, unknown>>;
        readonly scopes?: readonly string[] | null;
      };
    };
  };
}

/** The scopes a token carries: its `scope` claim (space-separated, OAuth 2.0), and `jwt.scopes` where the gateway lists them. */
export function scopesOf(event: AuthorizedEvent): ReadonlySet<string> {
  const jwt = event.requestContext?.authorizer?.jwt;
  const claim = jwt?.claims?.scope;
  const fromClaim = typeof claim === 'string' ? claim.split(' ').filter(Boolean) : [];
  return new Set([...fromClaim, ...(jwt?.scopes ?? [])]);
}

/**
 * The caller of an authorized route; undefined when the event carries no
 * `sub` (a route without the authorizer, or an event not from the gateway).
 * A pure function of the event: the gateway has checked the signature,
 * issuer, audience, expiry and the route's scopes before the function runs.
 */
export function callerOf(event: AuthorizedEvent): Caller | undefined {
  const sub = event.requestContext?.authorizer?.jwt?.claims?.sub;
  if (typeof sub !== 'string' || sub === '') return undefined;
  return { sub, isAdmin: scopesOf(event).has(SCOPES.admin) };
}

/**
 * Whether `caller` may see a record owned by `owner`: an admin sees every
 * record; a shop caller only its own. A record with no owner is no shop
 * caller's.
 */
export const mayAccess = (caller: Caller, owner: string | undefined): boolean =>
  caller.isAdmin || (owner !== undefined && owner === caller.sub);
