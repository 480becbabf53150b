import { createHash } from 'node:crypto';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documents, dynamo, fromEnvironment } from './aws';
import { AlreadyCreated, ClientError, ConcurrencyError, throttled, validationError } from './errors';
import { errorResult, type HttpRequest, type HttpResult } from './http';
import { newId } from './ids';
import { idempotencyEnvironment } from './seams';

const HEADER = 'idempotency-key';
const IN_PROGRESS_WAIT_MS = [25, 50, 100, 200, 400, 800, 1600];

interface IdempotentCall {
  readonly key: string;
  readonly body: unknown;
}

// Read at a sandbox's first idempotent request, once: this module is also bundled with functions that
// make none (and so have no table set).
let idempotencyTableName: string | undefined;
const idempotencyTable = () =>
  (idempotencyTableName ??= fromEnvironment(idempotencyEnvironment).idempotencyTable);

let persistenceStore: DynamoDBPersistenceLayer | undefined;
const store = () => {
  persistenceStore ??= new DynamoDBPersistenceLayer({
    tableName: idempotencyTable(),
    awsSdkV3Client: dynamo,
  });
  return persistenceStore;
};

/** The header's value, checked; undefined when the request has none. */
function idempotencyKey(request: HttpRequest): string | undefined {
  const key = request.headers[HEADER];
  if (key !== undefined && (key.length < 1 || key.length > 128)) {
    throw validationError('Idempotency-Key must be 1 to 128 characters', [{ field: 'Idempotency-Key' }]);
  }
  return key;
}

const keyReused = () =>
  new ClientError(409, 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different body');

/** What a creating command is given: the new aggregate's id, and the request's fingerprint for its first event. */
export interface Creation {
  readonly id: string;
  readonly requestHash?: string;
}

/** The first response to a creation, rebuilt from the created aggregate's first event item. */
export type FirstResponse = (
  aggregateId: string,
) => Promise<{ readonly requestHash?: string; readonly result: HttpResult } | undefined>;

const REFUSAL_TTL_SECONDS = 24 * 60 * 60;

/**
 * Makes a POST that creates an aggregate honour `Idempotency-Key` with no
 * write of its own on success. With a key, the new aggregate's id derives
 * from the key (and the route and path it was sent to), its first event item
 * carries the request's fingerprint, and its creation is conditional, as
 * every first append is: a repeat finds it made and answers the first
 * response, rebuilt from that item (the same key with another body is
 * `409 IDEMPOTENCY_KEY_REUSED`). Concurrent repeats all try; one creates.
 * A refusal the command decided (a 4xx, not 429) is remembered in the
 * idempotency table for 24 hours and replayed, so that the answer stays the
 * same even if the world changed. Compared with Powertools' record (written
 * when the request starts and again when it ends), a keyed creation costs one
 * read instead of two writes. Without the header the command simply runs.
 */
export function idempotentCreation<Input>(
  prefix: string,
  parse: (request: HttpRequest) => Input,
  create: (input: Input, request: HttpRequest, creation: Creation) => Promise<HttpResult>,
  firstResponse: FirstResponse,
) {
  return async (request: HttpRequest): Promise<HttpResult> => {
    const input = parse(request);
    const key = idempotencyKey(request);
    if (key === undefined) return create(input, request, { id: newId(prefix) });
    const scope = `${request.routeKey} ${request.path} ${key}`;
    const requestHash = createHash('sha256')
      .update(JSON.stringify(request.body ?? null))
      .digest('base64url');
    const refusalKey = { id: `refusal ${scope}` };
    const refused = await documents.send(
      new GetCommand({ TableName: idempotencyTable(), Key: refusalKey, ConsistentRead: true }),
    );
    if (refused.Item) {
      if (refused.Item.requestHash !== requestHash) throw keyReused();
      return JSON.parse(String(refused.Item.result)) as HttpResult;
    }
    const id = `${prefix}_${createHash('sha256').update(scope).digest('hex').slice(0, 32)}`;
    try {
      return await create(input, request, { id, requestHash });
    } catch (error) {
      const repeated =
        error instanceof AlreadyCreated || (error instanceof ConcurrencyError && error.existing.includes(id));
      if (repeated) {
        const first = await firstResponse(id);
        if (!first) throw error;
        if (first.requestHash !== requestHash) throw keyReused();
        return first.result;
      }
      if (!(error instanceof ClientError) || error.status === 429) throw error;
      // A decided refusal is the command's answer, remembered like a success.
      const result = errorResult(error);
      await documents.send(
        new PutCommand({
          TableName: idempotencyTable(),
          Item: {
            ...refusalKey,
            requestHash,
            result: JSON.stringify(result),
            expiration: Math.floor(Date.now() / 1000) + REFUSAL_TTL_SECONDS,
          },
        }),
      );
      return result;
    }
  };
}

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
    const key = idempotencyKey(request);
    if (key === undefined) return execute(input, request);
    config.registerLambdaContext(request.context);
    const call: IdempotentCall = {
      key: `${request.routeKey} ${request.path} ${key}`,
      body: request.body ?? null,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await run(call, input, request);
      } catch (error) {
        if (error instanceof IdempotencyValidationError) throw keyReused();
        const wait = IN_PROGRESS_WAIT_MS[attempt];
        // The first request with this key is still running: wait for its answer.
        if (error instanceof IdempotencyAlreadyInProgressError && wait !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        if (error instanceof IdempotencyAlreadyInProgressError) {
          throw throttled('a request with this Idempotency-Key is still in progress; retry later');
        }
        throw error;
      }
    }
  };
}
