import { generateKeyPairSync, sign } from 'node:crypto';
import type { Assembly, Resource } from '../../assembly';
import { resolver } from '../../assembly';
import { LocalIssuer } from '../../auth/issuer';
import { newSigningKey } from '../../auth/keys';
import { LocalHttpApi, routeSpecs } from '../../http-api';
import type { LambdaRuntime } from '../../lambda/runtime';

/**
 * The HTTP API enforcing a template's JWT authorizer as API Gateway does:
 * a small template as the CDK writes one (a Cognito pool as issuer, its
 * client as audience, scopes per route, two open routes), a stub runtime
 * that counts what ran.
 */
const route = (routeKey: string, auth: Record<string, unknown>): Resource => ({
  Type: 'AWS::ApiGatewayV2::Route',
  Properties: {
    ApiId: { Ref: 'Api' },
    RouteKey: routeKey,
    Target: { 'Fn::Join': ['', ['integrations/', { Ref: 'Integration' }]] },
    ...auth,
  },
});
const jwt = (scopes: string[]) => ({
  AuthorizationType: 'JWT',
  AuthorizerId: { Ref: 'Authorizer' },
  AuthorizationScopes: scopes,
});
const SHOP = ['commerce/shop', 'commerce/admin'];
const ADMIN = ['commerce/admin'];
const assembly: Assembly = {
  dir: '.',
  stackName: 'Commerce-test',
  template: {
    Resources: {
      Api: { Type: 'AWS::ApiGatewayV2::Api' },
      Pool: { Type: 'AWS::Cognito::UserPool' },
      Client: { Type: 'AWS::Cognito::UserPoolClient' },
      Authorizer: {
        Type: 'AWS::ApiGatewayV2::Authorizer',
        Properties: {
          ApiId: { Ref: 'Api' },
          AuthorizerType: 'JWT',
          IdentitySource: ['$request.header.Authorization'],
          JwtConfiguration: {
            Audience: [{ Ref: 'Client' }],
            Issuer: {
              'Fn::Join': [
                '',
                ['https://cognito-idp.', { Ref: 'AWS::Region' }, '.amazonaws.com/', { Ref: 'Pool' }],
              ],
            },
          },
          Name: 'Jwt',
        },
      },
      Integration: {
        Type: 'AWS::ApiGatewayV2::Integration',
        Properties: {
          IntegrationType: 'AWS_PROXY',
          PayloadFormatVersion: '2.0',
          IntegrationUri: { 'Fn::GetAtt': ['Fn', 'Arn'] },
        },
      },
      Fn: { Type: 'AWS::Lambda::Function' },
      Orders: route('GET /orders/{orderId}', jwt(SHOP)),
      Products: route('POST /products', jwt(ADMIN)),
      Any: route('GET /anyone', { AuthorizationType: 'JWT', AuthorizerId: { Ref: 'Authorizer' } }),
      Docs: route('GET /docs', { AuthorizationType: 'NONE' }),
      OpenApi: route('GET /openapi.json', {}),
    },
  },
};
const ISSUER = 'https://cognito-idp.us-east-1.amazonaws.com/Pool';

const invocations: { requestContext: { authorizer?: unknown } }[] = [];
const runtime = {
  functionIdOf: (arn: string) => arn.split(':').at(-1)!,
  invoke: async (_id: string, event: unknown) => {
    invocations.push(event as (typeof invocations)[number]);
    return { statusCode: 200, body: '{"ran":true}', headers: { 'content-type': 'application/json' } };
  },
} as unknown as LambdaRuntime;
const routes = routeSpecs(assembly, resolver(assembly), runtime);
const key = newSigningKey();
const issuer = LocalIssuer.forTemplate(key, [], new Set(SHOP), 'unused');
const local = new LocalIssuer(key, ISSUER, 'Client', new Set(SHOP));
let api: LocalHttpApi;

beforeAll(async () => {
  api = new LocalHttpApi(
    routes,
    runtime,
    () => undefined,
    undefined,
    (a) => local.keysFor(a),
  );
  await api.start(0);
});
afterAll(() => api.stop());
beforeEach(() => {
  invocations.length = 0;
});

const call = async (method: string, path: string, authorization?: string) => {
  const r = await fetch(`http://127.0.0.1:${api.port}${path}`, {
    method,
    headers: authorization === undefined ? {} : { authorization },
  });
  return { status: r.status, body: await r.json(), wwwAuthenticate: r.headers.get('www-authenticate') };
};
const token = (sub: string, scope: string, expiresIn?: number) =>
  local.mint({ sub, scope, ...(expiresIn === undefined ? {} : { expiresIn }) });

test('each route reads its authorization from the template: JWT with its scopes, or none', () => {
  const byKey = Object.fromEntries(routes.map((r) => [r.routeKey, r.authorization]));
  const authorizer = {
    logicalId: 'Authorizer',
    issuer: ISSUER,
    audiences: ['Client'],
    header: 'authorization',
  };
  expect(byKey['GET /orders/{orderId}']).toEqual({ type: 'JWT', authorizer, scopes: SHOP });
  expect(byKey['POST /products']).toEqual({ type: 'JWT', authorizer, scopes: ADMIN });
  expect(byKey['GET /anyone']).toEqual({ type: 'JWT', authorizer, scopes: [] });
  expect(byKey['GET /docs']).toEqual({ type: 'NONE' });
  expect(byKey['GET /openapi.json']).toEqual({ type: 'NONE' });
  // Without an authorizer in the template, the issuer still mints (for routes that check nothing).
  expect(issuer.issuer).toBe('unused');
});

test('a valid token with a scope of the route reaches the function, with its claims as strings and its scopes', async () => {
  const r = await call('GET', '/orders/o-1', `Bearer ${token('alice', 'commerce/shop')}`);
  expect(r).toMatchObject({ status: 200, body: { ran: true } });
  const authorizer = invocations[0]!.requestContext.authorizer as {
    jwt: { claims: Record<string, string>; scopes: string[] };
  };
  expect(authorizer.jwt.scopes).toEqual(['commerce/shop']);
  expect(authorizer.jwt.claims).toMatchObject({
    sub: 'alice',
    iss: ISSUER,
    client_id: 'Client',
    scope: 'commerce/shop',
  });
  expect(authorizer.jwt.claims.exp).toMatch(/^\d+$/);
  // The token without "Bearer " is accepted too (API Gateway takes either).
  expect((await call('GET', '/orders/o-1', token('alice', 'commerce/shop'))).status).toBe(200);
  expect((await call('GET', '/anyone', `Bearer ${token('bob', 'commerce/shop')}`)).status).toBe(200);
});

test('open routes run with no token and no authorizer context', async () => {
  expect((await call('GET', '/docs')).status).toBe(200);
  expect((await call('GET', '/openapi.json', 'Bearer garbage')).status).toBe(200);
  expect(invocations.map((e) => e.requestContext.authorizer)).toEqual([undefined, undefined]);
});

test('401 {"message":"Unauthorized"} before any function runs: no, malformed, expired, forged, foreign tokens', async () => {
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: ISSUER,
    sub: 'mallory',
    client_id: 'Client',
    scope: 'commerce/admin',
    iat: now,
    exp: now + 60,
  };
  const forged = (header: Record<string, unknown>, payload: Record<string, unknown>) => {
    const input = `${b64(header)}.${b64(payload)}`;
    return `${input}.${sign('sha256', Buffer.from(input), other.privateKey).toString('base64url')}`;
  };
  const valid = token('alice', 'commerce/shop');
  const [h, , s] = valid.split('.');
  const cases: [string, string | undefined][] = [
    ['no header', undefined],
    ['an empty header', ''],
    ['Bearer alone', 'Bearer '],
    ['not a JWT', 'Bearer abc.def'],
    ['expired', `Bearer ${token('alice', 'commerce/shop', -1)}`],
    ['alg none', `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`],
    ['tampered payload', `Bearer ${h}.${b64(claims)}.${s}`],
    ['own key, same kid', `Bearer ${forged({ alg: 'RS256', kid: key.kid }, claims)}`],
    ['wrong issuer', `Bearer ${forged({ alg: 'RS256', kid: key.kid }, { ...claims, iss: 'https://evil/' })}`],
    [
      'wrong audience',
      `Bearer ${new LocalIssuer(key, ISSUER, 'OtherClient', new Set()).mint({ sub: 'a', scope: 'commerce/admin' })}`,
    ],
    [
      'other issuer, signed by the local key',
      `Bearer ${new LocalIssuer(key, 'https://evil/', 'Client', new Set()).mint({ sub: 'a', scope: 'commerce/admin' })}`,
    ],
  ];
  for (const [what, authorization] of cases) {
    const r = await call('POST', '/products', authorization);
    expect({ what, status: r.status, body: r.body }).toEqual({
      what,
      status: 401,
      body: { message: 'Unauthorized' },
    });
    expect(r.wwwAuthenticate).toMatch(/^Bearer error="invalid_token"/);
  }
  expect(invocations).toHaveLength(0);
});

test('403 {"message":"Forbidden"} for a valid token without any scope the route lists', async () => {
  const shop = await call('POST', '/products', `Bearer ${token('alice', 'commerce/shop')}`);
  expect(shop).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
  expect(shop.wwwAuthenticate).toMatch(/insufficient_scope/);
  expect((await call('GET', '/orders/o-1', `Bearer ${token('alice', 'commerce/shopper')}`)).status).toBe(403);
  expect(invocations).toHaveLength(0);
  // Any one of the listed scopes is enough.
  expect((await call('GET', '/orders/o-1', `Bearer ${token('op', 'commerce/admin')}`)).status).toBe(200);
  expect((await call('POST', '/products', `Bearer ${token('op', 'openid commerce/admin')}`)).status).toBe(
    200,
  );
});

test('an authorizer or route the local cloud cannot enforce stops the start', () => {
  const withResources = (resources: Record<string, Resource>): Assembly => ({
    ...assembly,
    template: { Resources: { ...assembly.template.Resources, ...resources } },
  });
  const lambdaAuthorizer = withResources({
    Authorizer: { Type: 'AWS::ApiGatewayV2::Authorizer', Properties: { AuthorizerType: 'REQUEST' } },
  });
  expect(() => routeSpecs(lambdaAuthorizer, resolver(lambdaAuthorizer), runtime)).toThrow(/only JWT/);
  const iam = withResources({ Iam: route('GET /iam', { AuthorizationType: 'AWS_IAM' }) });
  expect(() => routeSpecs(iam, resolver(iam), runtime)).toThrow(/AWS_IAM is not run locally/);
  const dangling = withResources({
    Bad: route('GET /bad', { AuthorizationType: 'JWT', AuthorizerId: { Ref: 'Nope' } }),
  });
  expect(() => routeSpecs(dangling, resolver(dangling), runtime)).toThrow(/names no JWT authorizer/);
});
