import { createHmac, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { newSigningKey } from '../../auth/keys';
import { verifyJwt } from '../../auth/verify';

/** Tokens made here with node:crypto alone, not with the issuer's code: the verifier is checked against them. */
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const make = (header: Record<string, unknown>, payload: Record<string, unknown>, key?: KeyObject) => {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${key ? sign('sha256', Buffer.from(input), key).toString('base64url') : ''}`;
};

const key = newSigningKey();
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ISSUER = 'https://cognito-idp.us-east-1.amazonaws.com/Pool';
const expectation = {
  issuer: ISSUER,
  audiences: ['client-a', 'client-b'],
  keys: new Map([[key.kid, key.publicKey]]),
};
const NOW = 1_800_000_000;
const claims = {
  iss: ISSUER,
  sub: 'alice',
  client_id: 'client-a',
  scope: 'commerce/shop openid',
  iat: NOW - 10,
  exp: NOW + 3600,
};
const header = { alg: 'RS256', typ: 'JWT', kid: key.kid };
const good = (overrides: Record<string, unknown> = {}) =>
  make(header, { ...claims, ...overrides }, key.privateKey);
const reason = (token: string, now = NOW) => {
  const verdict = verifyJwt(token, expectation, now);
  return verdict.valid ? 'valid' : verdict.reason;
};

test('a token of the issuer, for the audience, in its lifetime is valid; its scopes are read', () => {
  const verdict = verifyJwt(good(), expectation, NOW);
  expect(verdict).toEqual({ valid: true, claims, scopes: ['commerce/shop', 'openid'] });
});

test('aud instead of client_id, as a string or a list, names the audience as well', () => {
  expect(reason(good({ client_id: undefined, aud: 'client-b' }))).toBe('valid');
  expect(reason(good({ client_id: undefined, aud: ['x', 'client-b'] }))).toBe('valid');
  expect(reason(good({ client_id: 'x', aud: 'y' }))).toMatch(/audience/);
  expect(reason(good({ client_id: undefined }))).toMatch(/audience/);
});

test('another issuer, or none, is refused', () => {
  expect(reason(good({ iss: 'https://evil.example.com/' }))).toMatch(/issuer/);
  expect(reason(good({ iss: undefined }))).toMatch(/issuer/);
});

test('expired (exp at or before now), not yet valid (nbf), issued in the future, or without exp is refused', () => {
  expect(reason(good({ exp: NOW }))).toMatch(/expired/);
  expect(reason(good({ exp: NOW - 1 }))).toMatch(/expired/);
  expect(reason(good({ exp: undefined }))).toMatch(/expired/);
  expect(reason(good({ exp: String(NOW + 60) }))).toMatch(/not a number/);
  expect(reason(good({ nbf: NOW + 5 }))).toMatch(/not valid yet/);
  expect(reason(good({ nbf: NOW }))).toBe('valid');
  expect(reason(good({ iat: NOW + 5 }))).toMatch(/future/);
});

test('alg none, HS256 keyed with the public key, or any alg but RS256 is refused', () => {
  expect(reason(make({ alg: 'none', typ: 'JWT', kid: key.kid }, claims))).toMatch(/signing method none/);
  expect(reason(make({ typ: 'JWT', kid: key.kid }, claims))).toMatch(/signing method undefined/);
  const pem = key.publicKey.export({ format: 'pem', type: 'spki' });
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${b64(claims)}`;
  const hs = `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
  expect(reason(hs)).toMatch(/HS256/);
  expect(reason(make({ ...header, alg: 'RS512' }, claims, key.privateKey))).toMatch(/RS512/);
});

test('a tampered payload, another key under the same kid, or an unknown kid is refused', () => {
  const [h, , s] = good().split('.');
  const tampered = `${h}.${b64({ ...claims, sub: 'mallory', scope: 'commerce/admin' })}.${s}`;
  expect(reason(tampered)).toMatch(/signature/);
  expect(reason(make(header, claims, other.privateKey))).toMatch(/signature/);
  expect(reason(make({ ...header, kid: 'unknown' }, claims, key.privateKey))).toMatch(/kid/);
  expect(reason(make({ alg: 'RS256' }, claims, key.privateKey))).toMatch(/kid/);
  const flipped = good().slice(0, -2) + (good().endsWith('A') ? 'B' : 'A');
  expect(reason(`${flipped}`)).not.toBe('valid');
});

test('what is not a compact JWS of JSON objects is refused', () => {
  for (const token of [
    '',
    'abc',
    'a.b',
    'a.b.c.d',
    `${b64('x')}.${b64(claims)}.`,
    '!!.??.**',
    `${b64(header)}.${b64([1])}.`,
  ]) {
    expect(reason(token)).toBe('the token is not a JWT');
  }
});

describe('a token sent again (its signature is checked once)', () => {
  test('is still refused once it has expired', () => {
    const token = good({ sub: 'again-expiry' });
    expect(reason(token)).toBe('valid');
    expect(reason(token, NOW + 3600)).toBe('the token has expired');
  });

  test('is refused once the issuer no longer holds the key that signed it', () => {
    const token = good({ sub: 'again-rotated' });
    expect(reason(token)).toBe('valid');
    const rotated = { ...expectation, keys: new Map([[key.kid, other.publicKey]]) };
    expect(verifyJwt(token, rotated, NOW)).toEqual({ valid: false, reason: 'the signature is invalid' });
    expect(verifyJwt(token, { ...expectation, keys: new Map() }, NOW)).toEqual({
      valid: false,
      reason: 'the token has no kid of the issuer',
    });
  });

  test('is checked against the route’s issuer and audiences each time', () => {
    const token = good({ sub: 'again-audience' });
    expect(reason(token)).toBe('valid');
    expect(verifyJwt(token, { ...expectation, audiences: ['client-z'] }, NOW)).toEqual({
      valid: false,
      reason: 'the token does not have a valid audience',
    });
  });
});
