import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { ConcurrencyError, validationError } from '../../functions/shared/errors';
import { type HttpRequest, httpHandler } from '../../functions/shared/http';

const CONTEXT = { awsRequestId: 'test', getRemainingTimeInMillis: () => 10_000 } as Context;
/** What API Gateway's JWT authorizer puts in the event of a route it let through. */
const authorized = (claims: Record<string, unknown>) => ({
  routeKey: 'GET /probe',
  rawPath: '/probe',
  headers: {},
  requestContext: { authorizer: { jwt: { claims, scopes: null } } },
});
const SHOPPER = authorized({ sub: 'user-1', scope: 'openid commerce/shop' });

/** What a route throws, and how the HTTP edge answers it. */
const answerTo = async (thrown: unknown) => {
  const handler = httpHandler({ probe: 'GET /probe' } as const, {
    probe: async () => {
      throw thrown;
    },
  });
  const result = await handler(SHOPPER as unknown as APIGatewayProxyEventV2, CONTEXT);
  return { status: result.statusCode, headers: result.headers ?? {}, body: JSON.parse(result.body) };
};

const awsError = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, ...extra });

describe('the HTTP edge', () => {
  test.each([
    ['DynamoDB throttling', awsError('ThrottlingException')],
    ['a table over its throughput', awsError('ProvisionedThroughputExceededException')],
    ['an account over its request limit', awsError('RequestLimitExceeded')],
    ['a single write meeting a transaction', awsError('TransactionConflictException')],
    [
      'a transaction cancelled for throttling',
      awsError('TransactionCanceledException', {
        CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }],
      }),
    ],
    ['a command that lost every retry to concurrent writers', new ConcurrencyError(['ord_x'])],
  ])('answers %s with 429 THROTTLED and Retry-After', async (_, thrown) => {
    const answer = await answerTo(thrown);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.body).toEqual({ error: { code: 'THROTTLED', message: expect.any(String), details: [] } });
  });

  test('answers a fault of the platform with 500, not 429', async () => {
    const answers = await Promise.all([
      answerTo(new TypeError('undefined is not a function')),
      answerTo(
        awsError('TransactionCanceledException', { CancellationReasons: [{ Code: 'ValidationError' }] }),
      ),
      answerTo(awsError('ResourceNotFoundException')),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(500);
      expect(answer.headers['retry-after']).toBeUndefined();
      expect(answer.body.error.code).toBe('INTERNAL_ERROR');
    }
  });

  test('answers a client error as the contract says, with Retry-After only on a 429', async () => {
    const invalid = await answerTo(validationError('bad', [{ field: 'x', message: 'no' }]));
    expect(invalid.status).toBe(400);
    expect(invalid.headers['retry-after']).toBeUndefined();
  });

  test('hands the route its caller from the authorizer’s claims', async () => {
    const seen: HttpRequest['caller'][] = [];
    const handler = httpHandler({ probe: 'GET /probe' } as const, {
      probe: async ({ caller }) => {
        seen.push(caller);
        return { statusCode: 204, body: '' };
      },
    });
    await handler(SHOPPER as unknown as APIGatewayProxyEventV2, CONTEXT);
    await handler(
      authorized({ sub: 'ops', scope: 'commerce/admin' }) as unknown as APIGatewayProxyEventV2,
      CONTEXT,
    );
    expect(seen).toEqual([
      { sub: 'user-1', isAdmin: false },
      { sub: 'ops', isAdmin: true },
    ]);
  });

  test('answers a request without the authorizer’s claims 401 as API Gateway does, and runs nothing', async () => {
    const probe = jest.fn();
    const handler = httpHandler({ probe: 'GET /probe' } as const, { probe });
    const bare = { routeKey: 'GET /probe', rawPath: '/probe', headers: {}, requestContext: {} };
    const result = await handler(bare as unknown as APIGatewayProxyEventV2, CONTEXT);
    expect(result.statusCode).toBe(401);
    expect(JSON.parse(result.body)).toEqual({ message: 'Unauthorized' });
    expect(probe).not.toHaveBeenCalled();
  });

  test('serves an anonymous module (the documentation) without claims', async () => {
    const handler = httpHandler(
      { probe: 'GET /probe' } as const,
      { probe: async ({ caller }) => ({ statusCode: 200, body: JSON.stringify(caller) }) },
      { anonymous: true },
    );
    const bare = { routeKey: 'GET /probe', rawPath: '/probe', headers: {}, requestContext: {} };
    const result = await handler(bare as unknown as APIGatewayProxyEventV2, CONTEXT);
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toEqual({ sub: '', isAdmin: false });
  });
});
