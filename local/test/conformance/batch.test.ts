import { BatchGetItemCommand, BatchWriteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { keyed, n, openTarget, refusal, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/** BatchWriteItem and BatchGetItem as the sweepers and load tools send them. */
let target: Target;
let table: string; // id (S)

beforeAll(async () => {
  target = await openTarget();
  table = await target.table({
    ...keyed(['id', 'S']),
  });
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const puts = (prefix: string, count: number): WriteRequest[] =>
  Array.from({ length: count }, (_, i) => ({ PutRequest: { Item: { id: s(`${prefix}-${i}`), i: n(i) } } }));

// API Reference, BatchWriteItem: "A single call to BatchWriteItem can transmit up to 16MB of data over the
// network, consisting of up to 25 item put or delete operations." "If any requested operations fail because
// ... UnprocessedItems"; "Your request contains at least two items with identical hash and range keys (which
// essentially is two put operations)" is a ValidationException; "There are more than 25 requests in the
// batch" is a ValidationException.
describe('BatchWriteItem', () => {
  test('25 puts are written; UnprocessedItems is present and empty', async () => {
    const out = await target.db.send(new BatchWriteItemCommand({ RequestItems: { [table]: puts('w', 25) } }));
    expect(out.UnprocessedItems).toEqual({});
    const got = await target.db.send(
      new BatchGetItemCommand({
        RequestItems: {
          [table]: {
            Keys: Array.from({ length: 25 }, (_, i) => ({ id: s(`w-${i}`) })),
            ConsistentRead: true,
          },
        },
      }),
    );
    expect(got.Responses?.[table]).toHaveLength(25);
  });

  test('puts and deletes in one batch', async () => {
    await target.db.send(
      new BatchWriteItemCommand({
        RequestItems: { [table]: [...puts('pd', 2), { DeleteRequest: { Key: { id: s('w-0') } } }] },
      }),
    );
    const got = await target.db.send(
      new BatchGetItemCommand({
        RequestItems: { [table]: { Keys: [{ id: s('pd-1') }, { id: s('w-0') }], ConsistentRead: true } },
      }),
    );
    expect(got.Responses?.[table]?.map((i) => i.id?.S)).toEqual(['pd-1']);
  });

  test('26 requests are a ValidationException and nothing is written', async () => {
    const error = await refusal(
      target.db.send(new BatchWriteItemCommand({ RequestItems: { [table]: puts('x26', 26) } })),
    );
    expect(error.name).toBe('ValidationException');
    const got = await target.db.send(
      new BatchGetItemCommand({
        RequestItems: { [table]: { Keys: [{ id: s('x26-0') }], ConsistentRead: true } },
      }),
    );
    expect(got.Responses?.[table]).toEqual([]);
  });

  test('two requests for one item are a ValidationException', async () => {
    const error = await refusal(
      target.db.send(
        new BatchWriteItemCommand({
          RequestItems: { [table]: [...puts('dup', 1), { DeleteRequest: { Key: { id: s('dup-0') } } }] },
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Provided list of item keys contains duplicates');
  });
});

// API Reference, BatchGetItem: "A single operation can retrieve up to 16 MB of data, which can contain as
// many as 100 items." "If you request more than 100 items, BatchGetItem returns a ValidationException with
// the message 'Too many items requested for the BatchGetItem call.'" Duplicate keys: ValidationException.
describe('BatchGetItem', () => {
  test('100 keys, missing ones simply absent; UnprocessedKeys present and empty; projection applied', async () => {
    const Keys = Array.from({ length: 100 }, (_, i) => ({ id: s(`w-${i}`) }));
    const out = await target.db.send(
      new BatchGetItemCommand({
        RequestItems: {
          [table]: { Keys, ProjectionExpression: 'id, #i', ExpressionAttributeNames: { '#i': 'i' } },
        },
      }),
    );
    expect(out.UnprocessedKeys).toEqual({});
    const ids = out.Responses?.[table]?.map((i) => i.id?.S).sort();
    // w-0 was deleted above; w-1..w-24 exist.
    expect(ids).toEqual(Array.from({ length: 24 }, (_, i) => `w-${i + 1}`).sort());
    expect(out.Responses?.[table]?.find((i) => i.id?.S === 'w-3')).toEqual({ id: s('w-3'), i: n(3) });
  });

  test('101 keys are a ValidationException', async () => {
    const Keys = Array.from({ length: 101 }, (_, i) => ({ id: s(`k-${i}`) }));
    const error = await refusal(
      target.db.send(new BatchGetItemCommand({ RequestItems: { [table]: { Keys } } })),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Too many items requested for the BatchGetItem call');
  });

  test('a key asked for twice is a ValidationException', async () => {
    const error = await refusal(
      target.db.send(
        new BatchGetItemCommand({
          RequestItems: { [table]: { Keys: [{ id: s('w-1') }, { id: s('w-1') }] } },
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Provided list of item keys contains duplicates');
  });
});
