import { callerOf, mayAccess, scopesOf } from '../../functions/shared/caller';

/** An HTTP API (payload 2.0) event as the JWT authorizer leaves it. */
const event = (claims: Record<string, unknown> | undefined, scopes?: string[] | null) => ({
  requestContext: { authorizer: claims ? { jwt: { claims, scopes: scopes ?? null } } : undefined },
});

describe('the caller, from the authorizer’s claims', () => {
  test('a shop token is its sub, not an admin', () => {
    expect(callerOf(event({ sub: 'u-1', scope: 'commerce/shop' }))).toEqual({ sub: 'u-1', isAdmin: false });
    expect(callerOf(event({ sub: 'u-1', scope: 'openid email commerce/shop' }))).toEqual({
      sub: 'u-1',
      isAdmin: false,
    });
  });

  test('a token with commerce/admin is an admin, wherever the scope is listed', () => {
    expect(callerOf(event({ sub: 'ops', scope: 'commerce/admin' }))?.isAdmin).toBe(true);
    expect(callerOf(event({ sub: 'ops', scope: 'commerce/shop commerce/admin' }))?.isAdmin).toBe(true);
    // `jwt.scopes` where the gateway lists them; `scope` may then be absent.
    expect(callerOf(event({ sub: 'ops' }, ['commerce/admin']))?.isAdmin).toBe(true);
  });

  test('only the exact scope makes an admin', () => {
    for (const scope of ['commerce/administrator', 'admin', 'commerce/Admin', 'xcommerce/admin', '']) {
      expect(callerOf(event({ sub: 's', scope }))?.isAdmin).toBe(false);
    }
    // A scope claim that is not a string (some issuers send a list as `scp`) grants nothing.
    expect(callerOf(event({ sub: 's', scope: ['commerce/admin'] }))?.isAdmin).toBe(false);
  });

  test('no claims, or no sub: no caller', () => {
    expect(callerOf({})).toBeUndefined();
    expect(callerOf(event(undefined))).toBeUndefined();
    expect(callerOf(event({ scope: 'commerce/admin' }))).toBeUndefined();
    expect(callerOf(event({ sub: '', scope: 'commerce/shop' }))).toBeUndefined();
    expect(callerOf(event({ sub: 42, scope: 'commerce/shop' }))).toBeUndefined();
  });

  test('scopes are split on spaces, duplicates and empties dropped', () => {
    expect([...scopesOf(event({ sub: 's', scope: ' a  b a ' }, ['c']))].sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('who may see a record', () => {
  const shopper = { sub: 'u-1', isAdmin: false };
  const admin = { sub: 'ops', isAdmin: true };

  test('a shop caller sees only its own', () => {
    expect(mayAccess(shopper, 'u-1')).toBe(true);
    expect(mayAccess(shopper, 'u-2')).toBe(false);
    // A record of no owner (an admin's customer for nobody, a reservation from before owners) is no shop caller's.
    expect(mayAccess(shopper, undefined)).toBe(false);
  });

  test('an admin sees every record', () => {
    expect(mayAccess(admin, 'u-1')).toBe(true);
    expect(mayAccess(admin, undefined)).toBe(true);
  });
});
