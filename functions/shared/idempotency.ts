/**
 * `Idempotency-Key`: the header, what a key is scoped to, and keyed
 * creations, whose aggregate is their record (`idempotentCreation`). A
 * command that creates nothing keeps a record per key instead
 * (./idempotent-command.ts).
 */
import { createHash } from 'node:crypto';
import { AlreadyCreated, ClientError, ConcurrencyError, validationError } from './errors';
import type { RememberedRefusal } from './event-store';
import { errorResult, type HttpRequest, type HttpResult } from './http';
import { newId } from './ids';

const HEADER = 'idempotency-key';

/** The header's value, checked; undefined when the request has none (and the route does not require one). */
export function idempotencyKey(request: HttpRequest, required = false): string | undefined {
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
export const keyScope = (request: HttpRequest, key: string) =>
  `${request.caller.sub} ${request.routeKey} ${request.path} ${key}`;

/** The body's fingerprint: a repeat with another body under the same key is refused (`keyReused`). */
export const bodyFingerprint = (request: HttpRequest) =>
  createHash('sha256')
    .update(JSON.stringify(request.body ?? null))
    .digest('base64url');

export const keyReused = () =>
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
    const requestHash = bodyFingerprint(request);
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
