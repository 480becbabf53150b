/**
 * `Idempotency-Key` for a command that creates nothing (the keyed restock):
 * one record per key in the idempotency table, claimed before the command
 * runs and holding its answer after. A creation needs none of this
 * (`./idempotency`: its aggregate is its record).
 *
 * The protocol is Powertools idempotency's, whose records this table held
 * until its library (with its JMESPath, 40 KB of the bundle) was replaced by
 * these few calls (docs/decisions/0008):
 * - a conditional put claims the key (`INPROGRESS`), unless a live record
 *   holds it: a `COMPLETED` one answers its answer, an `INPROGRESS` one makes
 *   the repeat wait for it (then `429`), another body is `409`;
 * - the command's answer (a 4xx it decided included) completes the record;
 *   a fault deletes it, so that a retry runs the command again;
 * - a claim whose answer was lost (the SDK retries it, and its condition
 *   then fails on the record it made) is recognised by its claim id and
 *   taken as made, where Powertools took it for another request's.
 */
import { createHash, randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documents, fromEnvironment } from './aws';
import { isDynamoDbError } from './dynamodb-documents';
import { ClientError, throttled } from './errors';
import { errorResult, type HttpRequest, type HttpResult } from './http';
import { bodyFingerprint, idempotencyKey, keyReused, keyScope } from './idempotency';
import { logger } from './powertools';
import { idempotencyEnvironment } from './seams';

/** How long a key's answer is kept (the table's TTL removes the record after). */
const RECORD_TTL_SECONDS = 24 * 60 * 60;
/** How long a repeat waits, attempt by attempt, for the first request still running. */
const IN_PROGRESS_WAIT_MS = [25, 50, 100, 200, 400, 800, 1600];

/** A key's record (the table's key is `id`, its TTL attribute `expiration`). */
export interface KeyRecord {
  readonly id: string;
  readonly status: 'INPROGRESS' | 'COMPLETED';
  /** The body's fingerprint: the same key with another body is refused. */
  readonly payloadHash: string;
  /** Which request's claim it is (a fresh id per claim). */
  readonly claim: string;
  /** Epoch ms after which an `INPROGRESS` record is abandoned (its invocation ran out of time). */
  readonly inProgressUntil: number;
  /** Epoch seconds: when the table deletes it. */
  readonly expiration: number;
  /** The first answer, as JSON (`COMPLETED`). */
  readonly answer?: string;
}

/** What a repeat is answered on finding `found`; undefined: wait for it (it is in progress). */
export function repeatAnswer(found: KeyRecord, payloadHash: string): HttpResult | undefined {
  if (found.payloadHash !== payloadHash) throw keyReused();
  return found.status === 'COMPLETED' && found.answer !== undefined
    ? (JSON.parse(found.answer) as HttpResult)
    : undefined;
}

// Read for a handler's first `idempotentCommand`, once.
let table: string | undefined;
const tableName = () => {
  table ??= fromEnvironment(idempotencyEnvironment).idempotencyTable;
  return table;
};

/** Claims the key; undefined when this request holds it now, else the live record that holds it. */
async function claimKey(record: KeyRecord, now: number): Promise<KeyRecord | undefined> {
  try {
    await documents.put({
      TableName: tableName(),
      Item: { ...record },
      // Free, expired (not yet removed by TTL), or abandoned in progress.
      ConditionExpression:
        'attribute_not_exists(id) OR expiration < :nowSeconds OR (#status = :inProgress AND inProgressUntil < :now)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':nowSeconds': Math.floor(now / 1000),
        ':now': now,
        ':inProgress': 'INPROGRESS',
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return undefined;
  } catch (error) {
    if (!isDynamoDbError(error, 'ConditionalCheckFailedException') || !error.Item) throw error;
    const found = unmarshall(error.Item) as KeyRecord;
    // This very claim, made by an attempt whose answer was lost.
    return found.claim === record.claim ? undefined : found;
  }
}

/** Completes the key's record with its first answer (only while this claim holds it). */
const complete = (record: KeyRecord, answer: HttpResult) =>
  documents.update({
    TableName: tableName(),
    Key: { id: record.id },
    UpdateExpression: 'SET #status = :completed, answer = :answer',
    ConditionExpression: 'claim = :claim',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':completed': 'COMPLETED',
      ':answer': JSON.stringify(answer),
      ':claim': record.claim,
    },
  });

/** Frees the key after a fault, so that the client's retry runs the command (only this claim's record). */
const release = (record: KeyRecord) =>
  documents.delete({
    TableName: tableName(),
    Key: { id: record.id },
    ConditionExpression: 'attribute_not_exists(id) OR claim = :claim',
    ExpressionAttributeValues: { ':claim': record.claim },
  });

/**
 * Makes a POST honour `Idempotency-Key`: a repeat with the same key and body
 * answers the first response, including a 4xx the command decided; the same
 * key with another body is `409 IDEMPOTENCY_KEY_REUSED`; a repeat while the
 * first still runs waits for its answer, then is `429`. The body is validated
 * before this runs, so bad input stores nothing. Without the header the
 * command simply runs.
 */
export function idempotentCommand<Input>(
  parse: (request: HttpRequest) => Input,
  execute: (input: Input, request: HttpRequest) => Promise<HttpResult>,
) {
  return async (request: HttpRequest): Promise<HttpResult> => {
    const input = parse(request);
    const key = idempotencyKey(request);
    if (key === undefined) return execute(input, request);
    const id = createHash('sha256').update(keyScope(request, key)).digest('base64url');
    const payloadHash = bodyFingerprint(request);
    for (let attempt = 0; ; attempt++) {
      const now = Date.now();
      const record: KeyRecord = {
        id,
        status: 'INPROGRESS',
        payloadHash,
        claim: randomUUID(),
        // Past the invocation's own end, the claim is abandoned: a repeat may take the key.
        inProgressUntil: now + request.context.getRemainingTimeInMillis(),
        expiration: Math.floor(now / 1000) + RECORD_TTL_SECONDS,
      };
      const found = await claimKey(record, now);
      if (found === undefined) return runClaimed(record, () => execute(input, request));
      const answer = repeatAnswer(found, payloadHash);
      if (answer) return answer;
      const wait = IN_PROGRESS_WAIT_MS[attempt];
      if (wait === undefined)
        throw throttled('a request with this Idempotency-Key is still in progress; retry later');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
}

/** Runs the command under its claim: its answer completes the record, a fault frees it. */
async function runClaimed(record: KeyRecord, run: () => Promise<HttpResult>): Promise<HttpResult> {
  let answer: HttpResult;
  try {
    answer = await run();
  } catch (error) {
    // A decided refusal is the command's answer and is remembered like a success; 429 changed nothing.
    if (!(error instanceof ClientError) || error.status === 429) {
      // Not freed, the key waits for the invocation's end (`inProgressUntil`) before a retry may take it.
      await release(record).catch((lost) => logger.warn('idempotency key not freed', lost as Error));
      throw error;
    }
    answer = errorResult(error);
  }
  await complete(record, answer);
  return answer;
}
