import { type KeyObject, verify } from 'node:crypto';
import { type DecodedJwt, decodeJwt } from './jwt';

/** What a JWT authorizer checks a token against (its issuer, audience and the issuer's keys by `kid`). */
export interface JwtExpectation {
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly keys: ReadonlyMap<string, KeyObject>;
}

export type JwtVerdict =
  | { readonly valid: true; readonly claims: Record<string, unknown>; readonly scopes: readonly string[] }
  | { readonly valid: false; readonly reason: string };

const refuse = (reason: string): JwtVerdict => ({ valid: false, reason });

/** A NumericDate claim (seconds since the epoch), or an error when present and not a number. */
const numericDate = (claims: Record<string, unknown>, name: string): number | undefined | Error => {
  const value = claims[name];
  if (value === undefined) return undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : new Error(`${name} is not a number`);
};

/** The token's scopes: `scope` (space-separated, RFC 8693) or `scp` (a list or a string). */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const raw = claims.scope ?? claims.scp;
  if (typeof raw === 'string') return raw.split(' ').filter(Boolean);
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === 'string');
  return [];
}

/**
 * Checks a token as API Gateway's JWT authorizer does ("Validating a JWT"
 * in its developer guide), with node:crypto only: a compact JWS whose `alg`
 * is RS256 (`none`, HMAC or anything else is refused: the key type says
 * nothing about the algorithm a token claims), a `kid` among the issuer's
 * keys and a signature by it; then the claims: `iss` the issuer, `aud` or
 * `client_id` one of the audiences, `exp` after now, `nbf` and `iat` not
 * after now. The route's scopes are checked by the caller (a failed check
 * there is a 403, these are 401s).
 */
export function verifyJwt(token: string, expect: JwtExpectation, nowSeconds: number): JwtVerdict {
  const signed = signedToken(token, expect.keys);
  if ('refusal' in signed) return refuse(signed.refusal);
  const claims = signed.payload;
  if (claims.iss !== expect.issuer) return refuse('the token has an invalid issuer');
  const audiences = [...(Array.isArray(claims.aud) ? claims.aud : [claims.aud]), claims.client_id].filter(
    (a): a is string => typeof a === 'string',
  );
  if (!audiences.some((a) => expect.audiences.includes(a))) {
    return refuse('the token does not have a valid audience');
  }
  const exp = numericDate(claims, 'exp');
  const nbf = numericDate(claims, 'nbf');
  const iat = numericDate(claims, 'iat');
  for (const d of [exp, nbf, iat]) if (d instanceof Error) return refuse(d.message);
  if (exp === undefined || nowSeconds >= (exp as number)) return refuse('the token has expired');
  if (nbf !== undefined && nowSeconds < (nbf as number)) return refuse('the token is not valid yet');
  if (iat !== undefined && nowSeconds < (iat as number)) return refuse('the token was issued in the future');
  return { valid: true, claims, scopes: scopesOf(claims) };
}

/**
 * Tokens whose signature verified, with the key that verified it. A caller
 * sends one token with many requests, and the RSA check is most of what a
 * request's authorization costs; the claims (expiry above all) are still
 * checked on every request. A token is trusted again only while its `kid`
 * names the same key. Bounded: the oldest is forgotten first.
 */
const verifiedTokens = new Map<string, { readonly key: KeyObject; readonly decoded: DecodedJwt }>();
const MAX_VERIFIED_TOKENS = 10_000;

/** The token decoded, once its header and signature are checked against the issuer's keys. */
function signedToken(token: string, keys: ReadonlyMap<string, KeyObject>): DecodedJwt | { refusal: string } {
  const known = verifiedTokens.get(token);
  if (known && keys.get(known.decoded.header.kid as string) === known.key) return known.decoded;
  const decoded = decodeJwt(token);
  if (!decoded) return { refusal: 'the token is not a JWT' };
  const { header } = decoded;
  if (header.alg !== 'RS256') return { refusal: `signing method ${String(header.alg)} is invalid` };
  const key = typeof header.kid === 'string' ? keys.get(header.kid) : undefined;
  if (!key) return { refusal: 'the token has no kid of the issuer' };
  if (!verify('sha256', Buffer.from(decoded.signingInput), key, decoded.signature)) {
    return { refusal: 'the signature is invalid' };
  }
  if (verifiedTokens.size >= MAX_VERIFIED_TOKENS) verifiedTokens.delete(verifiedTokens.keys().next().value!);
  verifiedTokens.set(token, { key, decoded });
  return decoded;
}
