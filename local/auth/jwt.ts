import { type KeyObject, sign } from 'node:crypto';

/**
 * A JSON Web Token's three parts (RFC 7519, compact form), decoded but not
 * verified: what the verifier checks and the issuer signs.
 */
export interface DecodedJwt {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
  /** `header.payload` as sent: what the signature covers. */
  readonly signingInput: string;
  readonly signature: Buffer;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

const jsonObject = (part: string): Record<string, unknown> | undefined => {
  if (!BASE64URL.test(part)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

/** The token's parts, or undefined when it is not a compact JWS of three base64url parts with JSON objects. */
export function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [h, p, s] = parts as [string, string, string];
  const header = jsonObject(h);
  const payload = jsonObject(p);
  if (!header || !payload || !BASE64URL.test(s)) return undefined;
  return { header, payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, 'base64url') };
}

/** Signs `payload` with RS256 (RSASSA-PKCS1-v1_5, SHA-256) under `kid`. */
export function signRs256(payload: Record<string, unknown>, privateKey: KeyObject, kid: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signingInput = `${encode({ alg: 'RS256', typ: 'JWT', kid })}.${encode(payload)}`;
  const signature = sign('sha256', Buffer.from(signingInput), privateKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}
