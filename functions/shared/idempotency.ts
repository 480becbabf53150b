import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { dynamo, env } from './aws';
import { ClientError, validationError } from './errors';
import { errorResult, type HttpRequest, type HttpResult } from './http';

const HEADER = 'idempotency-key';
const IN_PROGRESS_WAIT_MS = [25, 50, 100, 200, 400, 800, 1600];

interface IdempotentCall {
  readonly key: string;
  readonly body: unknown;
}

let persistenceStore: DynamoDBPersistenceLayer | undefined;
const store = () => {
  persistenceStore ??= new DynamoDBPersistenceLayer({
    tableName: env('IDEMPOTENCY_TABLE'),
    awsSdkV3Client: dynamo,
  });
  return persistenceStore;
};

/**
 * Makes a POST honour `Idempotency-Key` (Powertools idempotency, DynamoDB
 * persistence): a repeat with the same key and body answers the first
 * response, including a 4xx the command decided; the same key with another
 * body is `409 IDEMPOTENCY_KEY_REUSED`. The body is validated before this
 * runs, so bad input stores nothing. Without the header the command simply runs.
 */
export function idempotentCommand<Input>(
  parse: (request: HttpRequest) => Input,
  execute: (input: Input, request: HttpRequest) => Promise<HttpResult>,
) {
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'body',
    expiresAfterSeconds: 24 * 60 * 60,
  });
  const run = makeIdempotent(
    async (_call: IdempotentCall, input: Input, request: HttpRequest): Promise<HttpResult> => {
      try {
        return await execute(input, request);
      } catch (error) {
        // A decided refusal is the command's answer and is remembered like a success.
        if (error instanceof ClientError) return errorResult(error);
        throw error;
      }
    },
    { persistenceStore: store(), config },
  );

  return async (request: HttpRequest): Promise<HttpResult> => {
    const input = parse(request);
    const key = request.headers[HEADER];
    if (key === undefined) return execute(input, request);
    if (key.length < 1 || key.length > 128) {
      throw validationError('Idempotency-Key must be 1 to 128 characters', [{ field: 'Idempotency-Key' }]);
    }
    config.registerLambdaContext(request.context);
    const call: IdempotentCall = {
      key: `${request.routeKey} ${request.path} ${key}`,
      body: request.body ?? null,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await run(call, input, request);
      } catch (error) {
        if (error instanceof IdempotencyValidationError) {
          throw new ClientError(
            409,
            'IDEMPOTENCY_KEY_REUSED',
            'this Idempotency-Key was used with a different body',
          );
        }
        const wait = IN_PROGRESS_WAIT_MS[attempt];
        // The first request with this key is still running: wait for its answer.
        if (error instanceof IdempotencyAlreadyInProgressError && wait !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        if (error instanceof IdempotencyAlreadyInProgressError) {
          throw new ClientError(
            429,
            'THROTTLED',
            'a request with this Idempotency-Key is still in progress; retry later',
          );
        }
        throw error;
      }
    }
  };
}
