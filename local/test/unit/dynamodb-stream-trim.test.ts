import type { StoredItem } from '../../dynamodb/collection';
import { decodeIterator, MAX_KEPT_RECORDS, TableStream, TRIM_BATCH } from '../../dynamodb/stream';

const ARN = 'arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/2026-01-01T00:00:00.000';
const itemNumber = (n: number): StoredItem => {
  const item = { pk: { S: `k${n}` } };
  return { keys: item, text: JSON.stringify(item) };
};

function streamWith(count: number, at = Date.now()) {
  const stream = new TableStream(ARN, '2026-01-01T00:00:00.000', 'NEW_IMAGE', 0, (item) => ({
    pk: item.pk!,
  }));
  for (let n = 1; n <= count; n++) stream.append(BigInt(n), at, undefined, itemNumber(n));
  return stream;
}
const firstKept = (stream: TableStream) => {
  const { Records } = stream.read(decodeIterator(stream.iterator('TRIM_HORIZON', undefined)), 1);
  return Number(Records[0]!.dynamodb.SequenceNumber);
};

describe('a stream keeps at most MAX_KEPT_RECORDS changes beyond a batch, oldest first out', () => {
  test('up to MAX_KEPT_RECORDS + TRIM_BATCH - 1 changes, nothing is trimmed', () => {
    expect(firstKept(streamWith(MAX_KEPT_RECORDS + TRIM_BATCH - 1))).toBe(1);
  });

  test('one more trims down to MAX_KEPT_RECORDS, and a reader behind them is told so', () => {
    const count = MAX_KEPT_RECORDS + TRIM_BATCH;
    const stream = streamWith(count);
    expect(firstKept(stream)).toBe(count - MAX_KEPT_RECORDS + 1);
    expect(() => stream.iterator('AT_SEQUENCE_NUMBER', '5'.padStart(21, '0'))).toThrow(
      expect.objectContaining({ type: 'TrimmedDataAccessException' }),
    );
    // Records still kept read on in order, across what was trimmed around them.
    const from = count - 3;
    const { Records } = stream.read(
      decodeIterator(stream.iterator('AT_SEQUENCE_NUMBER', String(from).padStart(21, '0'))),
      10,
    );
    expect(Records.map((r) => Number(r.dynamodb.SequenceNumber))).toEqual([
      from,
      from + 1,
      from + 2,
      from + 3,
    ]);
  });

  test('a batch of changes older than 24 hours goes, however few are kept', () => {
    const old = Date.now() - 25 * 60 * 60 * 1000;
    const stream = streamWith(TRIM_BATCH, old);
    stream.append(BigInt(TRIM_BATCH + 1), Date.now(), undefined, itemNumber(TRIM_BATCH + 1));
    expect(firstKept(stream)).toBe(TRIM_BATCH + 1);
  });
});
