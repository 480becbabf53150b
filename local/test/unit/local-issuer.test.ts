import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalIssuer } from '../../auth/issuer';
import { decodeJwt } from '../../auth/jwt';
import { keptSigningKey, newSigningKey } from '../../auth/keys';
import { verifyJwt } from '../../auth/verify';

const ISSUER = 'https://cognito-idp.us-east-1.amazonaws.com/Pool';
const SCOPES = new Set(['commerce/shop', 'commerce/admin']);
const issuer = new LocalIssuer(newSigningKey(), ISSUER, 'client-a', SCOPES);
const body = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

test('POST /_local/token mints an RS256 access token of the template issuer that the authorizer accepts', () => {
  const answer = issuer.token(body({ sub: 'alice', scope: 'commerce/shop' }));
  expect(answer.status).toBe(200);
  if (answer.status !== 200) return;
  expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  const decoded = decodeJwt(answer.body.access_token)!;
  expect(decoded.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: issuer.key.kid });
  const p = decoded.payload;
  expect(p).toMatchObject({
    iss: ISSUER,
    sub: 'alice',
    aud: 'client-a',
    client_id: 'client-a',
    scope: 'commerce/shop',
  });
  expect(p.exp).toBe((p.iat as number) + 3600);
  expect(typeof p.jti).toBe('string');
  const keys = issuer.keysFor({
    logicalId: 'A',
    issuer: ISSUER,
    audiences: ['client-a'],
    header: 'authorization',
  });
  expect(
    verifyJwt(answer.body.access_token, { issuer: ISSUER, audiences: ['client-a'], keys }, Date.now() / 1000),
  ).toMatchObject({ valid: true, scopes: ['commerce/shop'] });
  // An authorizer of another issuer does not trust the local keys.
  expect(
    issuer.keysFor({ logicalId: 'B', issuer: 'https://other/', audiences: ['x'], header: 'authorization' })
      .size,
  ).toBe(0);
});

test('a negative expiresIn mints a token that has already expired (for tests)', () => {
  const answer = issuer.token(body({ sub: 'alice', scope: 'commerce/admin commerce/shop', expiresIn: -60 }));
  expect(answer).toMatchObject({ status: 200, body: { expires_in: -60 } });
});

test.each([
  ['not JSON', '{'],
  ['not an object', '[1]'],
  ['null', 'null'],
  ['no sub', { scope: 'commerce/shop' }],
  ['an empty sub', { sub: '', scope: 'commerce/shop' }],
  ['a sub with a space', { sub: 'a b', scope: 'commerce/shop' }],
  ['a numeric sub', { sub: 7, scope: 'commerce/shop' }],
  ['a long sub', { sub: 'x'.repeat(129), scope: 'commerce/shop' }],
  ['no scope', { sub: 'a' }],
  ['an unknown scope', { sub: 'a', scope: 'commerce/root' }],
  ['a scope with a quote', { sub: 'a', scope: 'commerce/shop "x' }],
  ['a fractional expiresIn', { sub: 'a', scope: 'commerce/shop', expiresIn: 1.5 }],
  ['a zero expiresIn', { sub: 'a', scope: 'commerce/shop', expiresIn: 0 }],
  ['a huge expiresIn', { sub: 'a', scope: 'commerce/shop', expiresIn: 10 ** 9 }],
  ['a string expiresIn', { sub: 'a', scope: 'commerce/shop', expiresIn: '60' }],
  ['an unknown field', { sub: 'a', scope: 'commerce/shop', aud: 'other' }],
])('400 for %s', (_what, input) => {
  const answer = issuer.token(body(input));
  expect(answer.status).toBe(400);
  expect(answer.body).toMatchObject({ error: expect.stringMatching(/^invalid_(request|scope)$/) });
});

test('the JWKS publishes the public key alone', () => {
  const [jwk] = issuer.jwks.keys;
  expect(jwk).toEqual({
    kty: 'RSA',
    n: expect.any(String),
    e: 'AQAB',
    kid: issuer.key.kid,
    alg: 'RS256',
    use: 'sig',
  });
  expect(jwk).not.toHaveProperty('d');
});

test('with a data directory the key is kept (owner-only) and read back, same kid; without one each is new', () => {
  const dir = mkdtempSync(join(tmpdir(), 'issuer-'));
  try {
    const path = join(dir, 'issuer', 'signing-key.pem');
    const first = keptSigningKey(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(keptSigningKey(path).kid).toBe(first.kid);
    expect(keptSigningKey().kid).not.toBe(first.kid);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
