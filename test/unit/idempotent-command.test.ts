import { type KeyRecord, repeatAnswer } from '../../functions/shared/idempotent-command';

/**
 * What a keyed command's repeat is answered from the record it finds. The
 * claim itself (a conditional put, and a lost answer's retry recognised by
 * its claim id) runs against the local cloud: lost-answers.test.ts and
 * idempotency.test.ts.
 */
describe("a repeat of a keyed command, by the key's record", () => {
  const record = (status: KeyRecord['status'], answer?: unknown): KeyRecord => ({
    id: 'key',
    status,
    payloadHash: 'body',
    claim: 'first',
    inProgressUntil: Date.now() + 10_000,
    expiration: Math.floor(Date.now() / 1000) + 3600,
    ...(answer === undefined ? {} : { answer: JSON.stringify(answer) }),
  });

  test('is answered the first answer once the first request completed, a refusal included', () => {
    const ok = { statusCode: 200, headers: {}, body: '{"available":7}' };
    expect(repeatAnswer(record('COMPLETED', ok), 'body')).toEqual(ok);
    const refused = { statusCode: 404, headers: {}, body: '{"error":{}}' };
    expect(repeatAnswer(record('COMPLETED', refused), 'body')).toEqual(refused);
  });

  test('waits while the first request runs', () => {
    expect(repeatAnswer(record('INPROGRESS'), 'body')).toBeUndefined();
  });

  test('with another body is 409 IDEMPOTENCY_KEY_REUSED, whatever the first request did', () => {
    for (const found of [record('INPROGRESS'), record('COMPLETED', { statusCode: 200 })])
      expect(() => repeatAnswer(found, 'another body')).toThrow(
        expect.objectContaining({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED' }),
      );
  });
});
