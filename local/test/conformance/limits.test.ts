import {
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Item, keyed, n, openTarget, refusal, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/** Item size, number precision and form, and the validation errors of keys, with DynamoDB's codes. */
let target: Target;
let table: string; // id (S)
let composite: string; // pk (S) + sk (N)
let binaryRange: string; // pk (S) + sk (B)

beforeAll(async () => {
  target = await openTarget();
  [table, composite, binaryRange] = await Promise.all([
    target.table({
      ...keyed(['id', 'S']),
    }),
    target.table({
      ...keyed(['pk', 'S'], ['sk', 'N']),
    }),
    target.table({
      ...keyed(['pk', 'S'], ['sk', 'B']),
    }),
  ]);
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const put = (Item: Item, TableName = table) => target.db.send(new PutItemCommand({ TableName, Item }));
const read = async (Key: Item, TableName = table) =>
  (await target.db.send(new GetItemCommand({ TableName, Key, ConsistentRead: true }))).Item;

// Developer Guide, "Service, account, and table quotas in Amazon DynamoDB", Item size: "The maximum item size
// in DynamoDB is 400 KB, which includes both attribute name binary length (UTF-8 length) and attribute value
// lengths (again binary length)." "Item sizes": a string is its UTF-8 length.
describe('item size', () => {
  // id: 2 + 1 bytes; body: 4 + length bytes.
  const bodyFor = (total: number) => s('x'.repeat(total - 3 - 4));

  test('an item of exactly 400 KB is written', async () => {
    await put({ id: s('a'), body: bodyFor(400 * 1024) });
    expect((await read({ id: s('a') }))?.body?.S).toHaveLength(400 * 1024 - 7);
  });

  test('one byte more is a ValidationException', async () => {
    const error = await refusal(put({ id: s('b'), body: bodyFor(400 * 1024 + 1) }));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('Item size has exceeded the maximum allowed size');
    expect(await read({ id: s('b') })).toBeUndefined();
  });

  test('multi-byte characters count by their UTF-8 bytes', async () => {
    // 'é' is two bytes in UTF-8: 204,797 of them (409,594 bytes) + 7 bytes of names and key = 409,601 bytes.
    const error = await refusal(put({ id: s('c'), body: s('é'.repeat(204_797)) }));
    expect(error.name).toBe('ValidationException');
    await put({ id: s('c'), body: s('é'.repeat(204_796)) });
  });

  // API Reference, UpdateItem: an update that would make the item larger than 400 KB is refused.
  test('an update that grows the item past 400 KB is a ValidationException', async () => {
    await put({ id: s('d'), body: bodyFor(300 * 1024) });
    const error = await refusal(
      target.db.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { id: s('d') },
          UpdateExpression: 'SET more = :m',
          ExpressionAttributeValues: { ':m': s('y'.repeat(101 * 1024)) },
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect((await read({ id: s('d') }))?.more).toBeUndefined();
  });
});

// Developer Guide, "Supported data types and naming rules", Number: "Numbers can have up to 38 digits of
// precision. Exceeding this results in an exception." "Positive range: 1E-130 to 9.9999999999999999999999999
// 999999999999E+125"; "Leading and trailing zeroes are trimmed."
describe('numbers', () => {
  test('38 significant digits are kept exactly', async () => {
    const value = '12345678901234567890123456789012345678';
    await put({ id: s('n38'), v: n(value), d: n('-0.12345678901234567890123456789012345678') });
    const item = await read({ id: s('n38') });
    expect(item?.v).toEqual(n(value));
    expect(item?.d).toEqual(n('-0.12345678901234567890123456789012345678'));
  });

  test('39 significant digits are a ValidationException', async () => {
    for (const v of [
      '123456789012345678901234567890123456789',
      '-1.23456789012345678901234567890123456789',
    ]) {
      const error = await refusal(put({ id: s('n39'), v: n(v) }));
      expect(error.name).toBe('ValidationException');
    }
    expect(await read({ id: s('n39') })).toBeUndefined();
  });

  // DynamoDB words this refusal of an Item's number without the "ExpressionAttributeValues contains
  // invalid value: ... for key" frame it uses for an expression value.
  test("an Item's 39-digit number: DynamoDB's message", async () => {
    const error = await refusal(put({ id: s('n39'), v: n('123456789012345678901234567890123456789') }));
    expect(error.message).toBe('Attempting to store more than 38 significant digits in a Number');
  });

  test('an expression value of 39 digits is a ValidationException naming the placeholder', async () => {
    const error = await refusal(
      target.db.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { id: s('n39') },
          UpdateExpression: 'SET v = :v',
          ExpressionAttributeValues: { ':v': n('123456789012345678901234567890123456789') },
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'ExpressionAttributeValues contains invalid value: Attempting to store more than 38 significant digits in a Number for key :v',
    );
  });

  // Developer Guide, "Service, account, and table quotas": partition key values at most 2048 bytes, sort
  // key values at most 1024 bytes.
  test('key values past their size limits are a ValidationException', async () => {
    const hash = await refusal(put({ id: s('h'.repeat(2049)) }));
    expect(hash.name).toBe('ValidationException');
    await put({ id: s('h'.repeat(2048)) });
    const range = await refusal(
      target.db.send(
        new PutItemCommand({ TableName: binaryRange, Item: { pk: s('k'), sk: { B: new Uint8Array(1025) } } }),
      ),
    );
    expect(range.name).toBe('ValidationException');
    await target.db.send(
      new PutItemCommand({ TableName: binaryRange, Item: { pk: s('k'), sk: { B: new Uint8Array(1024) } } }),
    );
  });

  test('trailing zeros of an integer are not significant digits', async () => {
    await put({ id: s('n40'), v: n('1234567890123456789012345678901234567800') });
    expect((await read({ id: s('n40') }))?.v).toEqual(n('1234567890123456789012345678901234567800'));
  });

  test('numbers out of range are a ValidationException', async () => {
    for (const v of ['1E+126', '1E-131']) {
      const error = await refusal(put({ id: s('range'), v: n(v) }));
      expect(error.name).toBe('ValidationException');
    }
  });

  test('numbers come back normalized', async () => {
    await put({
      id: s('norm'),
      a: n('1.50'),
      b: n('001'),
      c: n('-0'),
      d: n('1e2'),
      e: n('0.000'),
      f: n('5E-3'),
      g: n('+7'),
      set: { NS: ['1.0', '2.50'] },
      nested: { M: { x: n('10.0') } },
    });
    const item = await read({ id: s('norm') });
    expect(item).toEqual({
      id: s('norm'),
      a: n('1.5'),
      b: n('1'),
      c: n('0'),
      d: n('100'),
      e: n('0'),
      f: n('0.005'),
      g: n('7'),
      set: expect.objectContaining({ NS: expect.arrayContaining(['1', '2.5']) }),
      nested: { M: { x: n('10') } },
    });
  });

  test('a number key is found by any spelling of its value', async () => {
    await put({ pk: s('k'), sk: n('1.50') }, composite);
    expect(await read({ pk: s('k'), sk: n('1.5') }, composite)).toEqual({ pk: s('k'), sk: n('1.5') });
    expect(await read({ pk: s('k'), sk: n('15E-1') }, composite)).toBeDefined();
  });

  test('a value that is not a number is a ValidationException', async () => {
    const error = await refusal(put({ id: s('nan'), v: n('12abc') }));
    expect(error.name).toBe('ValidationException');
  });
});

// API Reference, PutItem, Item: "You must provide all of the attributes for the primary key ... If you specify
// any attributes that are part of an index key, then the data types for those attributes must match those of
// the schema in the table's attribute definition." GetItem, Key: "For the primary key, you must provide all of
// the attributes." Developer Guide, "Supported data types": "String ... key attributes ... cannot be empty".
describe('key validation', () => {
  test('PutItem without the key is a ValidationException', async () => {
    const error = await refusal(put({ other: s('x') }));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('One or more parameter values were invalid: Missing the key id in the item');
  });

  test('PutItem with a key of the wrong type is a ValidationException', async () => {
    const error = await refusal(put({ id: n(1) }));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'One or more parameter values were invalid: Type mismatch for key id expected: S actual: N',
    );
  });

  test('an empty string key is a ValidationException; an empty string attribute is not', async () => {
    const error = await refusal(put({ id: s('') }));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: id',
    );
    await put({ id: s('empty-attr'), note: s('') });
    expect((await read({ id: s('empty-attr') }))?.note).toEqual(s(''));
  });

  test.each([
    ['a missing key attribute', { pk: s('k') }],
    ['a key attribute of the wrong type', { pk: s('k'), sk: s('1') }],
    ['an extra attribute in Key', { pk: s('k'), sk: n(1), other: s('x') }],
  ])('GetItem with %s is a ValidationException', async (_what, Key) => {
    const error = await refusal(target.db.send(new GetItemCommand({ TableName: composite, Key })));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe('The provided key element does not match the schema');
  });

  test('an empty set is a ValidationException', async () => {
    const error = await refusal(put({ id: s('set'), tags: { SS: [] } }));
    expect(error.name).toBe('ValidationException');
  });

  test('a set with duplicates is a ValidationException', async () => {
    const error = await refusal(put({ id: s('set'), tags: { SS: ['a', 'a'] } }));
    expect(error.name).toBe('ValidationException');
  });

  // API Reference, GetItem, Errors: ResourceNotFoundException "The operation tried to access a nonexistent
  // table or index."
  test('a table that does not exist is a ResourceNotFoundException', async () => {
    const error = await refusal(
      target.db.send(new GetItemCommand({ TableName: `${table}-missing`, Key: { id: s('x') } })),
    );
    expect(error.name).toBe('ResourceNotFoundException');
    const described = await refusal(
      target.db.send(new DescribeTableCommand({ TableName: `${table}-missing` })),
    );
    expect(described.name).toBe('ResourceNotFoundException');
  });
});
