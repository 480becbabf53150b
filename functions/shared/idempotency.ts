import { createHash, randomInt } from 'node:crypto';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyItemAlreadyExistsError,
  IdempotencyRecordStatus,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { dynamo, fromEnvironment } from './aws';
import { AlreadyCreated, ClientError, ConcurrencyError, throttled, validationError } from './errors';
import type { RememberedRefusal } from './event-store';
import { errorResult, type HttpRequest, type HttpResult } from './http';
import { newId } from './ids';
import { idempotencyEnvironment } from './seams';

const HEADER = 'idempotency-key';
const IN_PROGRESS_WAIT_MS = [25, 50, 100, 200, 400, 800, 1600];

interface IdempotentCall {
  readonly key: string;
  readonly body: unknown;
}

/**
 * Powertools' DynamoDB persistence, which finds its own in-progress record.
 * The record is a conditional `PutItem`; when DynamoDB makes it but its
 * answer is lost (a 500 or a reset connection after the commit), the SDK's
 * retry fails the condition on the record it made, which Powertools takes
 * for another request's, still in progress: the command answered 429 and
 * ran only once that record's in-progress time had run out. Each record's
 * in-progress expiry (epoch ms) carries a nonce below the millisecond, so
 * a record found with the very expiry, status and payload this put wrote
 * is this put's own, and the put succeeded. A millionth of a millisecond
 * changes no expiry.
 */
export class OwnRecordAwarePersistence extends DynamoDBPersistenceLayer {
  protected override async _putRecord(record: IdempotencyRecord): Promise<void> {
    if (record.inProgressExpiryTimestamp !== undefined && Number.isInteger(record.inProgressExpiryTimestamp))
      record.inProgressExpiryTimestamp += randomInt(1, 1_000_000) / 1_000_000;
    try {
      await super._putRecord(record);
    } catch (error) {
      if (error instanceof IdempotencyItemAlreadyExistsError && isOwnRecord(error.existingRecord, record))
        return;
      throw error;
    }
  }
}

/** Whether `found` is the in-progress record `wrote` put (see OwnRecordAwarePersistence). */
export const isOwnRecord = (found: IdempotencyRecord | undefined, wrote: IdempotencyRecord) =>
  found !== undefined &&
  wrote.inProgressExpiryTimestamp !== undefined &&
  !Number.isInteger(wrote.inProgressExpiryTimestamp) &&
  found.getStatus() === IdempotencyRecordStatus.INPROGRESS &&
  found.inProgressExpiryTimestamp === wrote.inProgressExpiryTimestamp &&
  found.payloadHash === wrote.payloadHash;

// Made for a handler's first `idempotentCommand`, once: this module is also bundled with functions that
// have none (and so have no table set).
let persistenceStore: DynamoDBPersistenceLayer | undefined;
const store = () => {
  persistenceStore ??= new OwnRecordAwarePersistence({
    tableName: fromEnvironment(idempotencyEnvironment).idempotencyTable,
    awsSdkV3Client: dynamo,
  });
  return persistenceStore;
};

/** The header's value, checked; undefined when the request has none (and the route does not require one). */
function idempotencyKey(request: HttpRequest, required = false): string | undefined {
  const key = request.headers[HEADER];
  if (key === undefined && required) {
    throw validationError('this request requires an Idempotency-Key header (1 to 128 characters)', [
      { field: 'Idempotency-Key', message: 'required' },
    ]);
  }
  if (key !== undefined && (key.length < 1 || key.length > 128)) {
    throw validationError('Idempotency-Key must be 1 to 128 characters', [{ field: 'Idempotency-Key' }]);
  }
  return key;
}

/**
 * What a key is scoped to: the caller (the same key sent by two `sub`s is two
 * keys), the route and the path it was sent to.
 */
const keyScope = (request: HttpRequest, key: string) =>
  `${request.caller.sub} ${request.routeKey} ${request.path} ${key}`;

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

/**
 * Where a creation's refusal is remembered: at the first version of the
 * aggregate it would have created (`AggregateStore.refuse`), so that a repeat
 * that would now succeed loses its creating write to it.
 */
export interface CreationRefusals {
  refuse(aggregateId: string, refusal: RememberedRefusal, now: Date): Promise<void>;
  refusal(aggregateId: string): Promise<RememberedRefusal | undefined>;
}

/** Whether `error` says that the aggregate `id` was created (or its creation refused) before. */
const madeBefore = (error: unknown, id: string) =>
  error instanceof AlreadyCreated || (error instanceof ConcurrencyError && error.existing.includes(id));

/**
 * Makes a POST that creates an aggregate honour `Idempotency-Key` with no
 * read or write of its own when it succeeds. With a key, the new aggregate's
 * id derives from the key (and the caller, route and path it was sent with), its first
 * event item carries the request's fingerprint, and its creation is
 * conditional, as every first append is: a repeat finds it made and answers
 * the first response, rebuilt from that item (the same key with another body
 * is `409 IDEMPOTENCY_KEY_REUSED`). Concurrent repeats all try; one creates.
 *
 * A refusal the command decided (a 4xx, not 429) is remembered where the
 * aggregate would have been (`refusals`), with the same condition: a repeat
 * runs the command again, and whether it would now be refused or would
 * succeed (the world may have changed), its write finds the refusal there
 * and it is answered the first answer. So a keyed creation reads nothing
 * before its command, and only a repeat reads the first outcome.
 * Without the header the command simply runs.
 */
export function idempotentCreation<Input>(
  prefix: string,
  parse: (request: HttpRequest) => Input,
  create: (input: Input, request: HttpRequest, creation: Creation) => Promise<HttpResult>,
  firstResponse: FirstResponse,
  refusals: CreationRefusals,
  /** `keyRequired`: a request without `Idempotency-Key` is `400` (routes that move money or stock). */
  { keyRequired = false }: { readonly keyRequired?: boolean } = {},
) {
  return async (request: HttpRequest): Promise<HttpResult> => {
    const input = parse(request);
    const key = idempotencyKey(request, keyRequired);
    if (key === undefined) return create(input, request, { id: newId(prefix) });
    const scope = keyScope(request, key);
    const requestHash = createHash('sha256')
      .update(JSON.stringify(request.body ?? null))
      .digest('base64url');
    const id = `${prefix}_${createHash('sha256').update(scope).digest('hex').slice(0, 32)}`;
    /**
     * The first request's answer, creation or refusal; `cause` when neither is there. The creation is looked
     * for first: a repeat of one that succeeded (a client retrying a lost answer) is the common case, and
     * costs one read.
     */
    const firstAnswer = async (cause: unknown): Promise<HttpResult> => {
      const created = await firstResponse(id);
      const refused = created ? undefined : await refusals.refusal(id);
      const first =
        created ??
        (refused && { requestHash: refused.requestHash, result: JSON.parse(refused.answer) as HttpResult });
      if (!first) throw cause;
      if (first.requestHash !== requestHash) throw keyReused();
      return first.result;
    };
    try {
      return await create(input, request, { id, requestHash });
    } catch (error) {
      if (madeBefore(error, id)) return firstAnswer(error);
      if (!(error instanceof ClientError) || error.status === 429) throw error;
      // A decided refusal is the command's answer, remembered like a success.
      const result = errorResult(error);
      try {
        await refusals.refuse(id, { requestHash, answer: JSON.stringify(result) }, request.now);
      } catch (lost) {
        // A repeat of this request got there first.
        if (madeBefore(lost, id)) return firstAnswer(lost);
        throw lost;
      }
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
      key: keyScope(request, key),
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
