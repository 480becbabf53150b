import { IdempotencyRecordStatus } from '@aws-lambda-powertools/idempotency';
import { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { isOwnRecord } from '../../functions/shared/idempotency';

describe('an idempotency record put again after its answer was lost', () => {
  const now = Date.now();
  const record = (inProgressExpiryTimestamp: number | undefined, payloadHash = 'hash') =>
    new IdempotencyRecord({
      idempotencyKey: 'key',
      status: IdempotencyRecordStatus.INPROGRESS,
      expiryTimestamp: Math.floor(now / 1000) + 3600,
      ...(inProgressExpiryTimestamp === undefined ? {} : { inProgressExpiryTimestamp }),
      payloadHash,
    });

  test('is its own when the record found has the very in-progress expiry (nonce included) and payload', () => {
    const wrote = record(now + 10_000.123456);
    expect(isOwnRecord(record(now + 10_000.123456), wrote)).toBe(true);
  });

  test('is another request’s when the expiry, the payload or the status differ, or there is no nonce', () => {
    const wrote = record(now + 10_000.123456);
    expect(isOwnRecord(record(now + 10_000.654321), wrote)).toBe(false);
    expect(isOwnRecord(record(now + 10_000.123456, 'other'), wrote)).toBe(false);
    const completed = new IdempotencyRecord({
      idempotencyKey: 'key',
      status: IdempotencyRecordStatus.COMPLETED,
      expiryTimestamp: Math.floor(now / 1000) + 3600,
      inProgressExpiryTimestamp: now + 10_000.123456,
      payloadHash: 'hash',
    });
    expect(isOwnRecord(completed, wrote)).toBe(false);
    expect(isOwnRecord(undefined, wrote)).toBe(false);
    // Without a nonce (no Lambda context: no in-progress expiry), nothing is taken for its own.
    expect(isOwnRecord(record(now + 10_000), record(now + 10_000))).toBe(false);
    expect(isOwnRecord(record(undefined), record(undefined))).toBe(false);
  });
});
