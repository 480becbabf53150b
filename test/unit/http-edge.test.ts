import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { ConcurrencyError, validationError } from '../../functions/shared/errors';
import { httpHandler } from '../../functions/shared/http';

/** What a route throws, and how the HTTP edge answers it. */
const answerTo = async (thrown: unknown) => {
  const handler = httpHandler({ probe: 'GET /probe' } as const, {
    probe: async () => {
      throw thrown;
    },
  });
  const event = { routeKey: 'GET /probe', rawPath: '/probe', headers: {}, requestContext: {} };
  const result = await handler(
    event as unknown as APIGatewayProxyEventV2,
    { awsRequestId: 'test', getRemainingTimeInMillis: () => 10_000 } as Context,
  );
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
});
