import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The local issuer's RSA key pair and the public half as a JSON Web Key. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly jwk: { kty: 'RSA'; n: string; e: string; kid: string; alg: 'RS256'; use: 'sig' };
}

function fromPrivateKey(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const { n, e } = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  // RFC 7638: the key's thumbprint names it, so the same key keeps its `kid` across starts.
  const kid = createHash('sha256')
    .update(JSON.stringify({ e, kty: 'RSA', n }))
    .digest('base64url');
  return { kid, privateKey, publicKey, jwk: { kty: 'RSA', n, e, kid, alg: 'RS256', use: 'sig' } };
}

/** A new 2048-bit RSA key (about 50–200 ms of CPU: once per start). */
export function newSigningKey(): SigningKey {
  return fromPrivateKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
}

/**
 * The key kept at `path` (PKCS#8 PEM), or a new one written there (mode
 * 0600, beside it then renamed over it): tokens minted before a restart on
 * the same `--data-dir` stay valid after it. Without a path, a new key that
 * lives as long as the process.
 */
export function keptSigningKey(path?: string): SigningKey {
  if (!path) return newSigningKey();
  if (existsSync(path)) return fromPrivateKey(createPrivateKey(readFileSync(path, 'utf8')));
  const key = newSigningKey();
  mkdirSync(dirname(path), { recursive: true });
  const next = `${path}.next`;
  writeFileSync(next, key.privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  renameSync(next, path);
  return key;
}

/** The JSON Web Key Set that publishes the keys (GET /_local/jwks.json). */
export const jwks = (keys: readonly SigningKey[]) => ({ keys: keys.map((k) => k.jwk) });
