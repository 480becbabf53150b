import {
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { type Item, keyed, n, openTarget, refusal, SETUP_TIMEOUT_MS, s, type Target } from './support/target';

/**
 * Expressions as the platform writes them: update expressions (SET, REMOVE,
 * ADD, DELETE, if_not_exists, arithmetic, list_append, nested paths),
 * condition expressions (comparisons, functions, boolean operators), and the
 * rules for expression attribute names and values.
 */
let target: Target;
let table: string;

beforeAll(async () => {
  target = await openTarget();
  table = await target.table({
    ...keyed(['id', 'S']),
  });
}, SETUP_TIMEOUT_MS);
afterAll(() => target?.close(), SETUP_TIMEOUT_MS);

const put = (Item: Item) => target.db.send(new PutItemCommand({ TableName: table, Item }));
const read = async (id: string) =>
  (await target.db.send(new GetItemCommand({ TableName: table, Key: { id: s(id) }, ConsistentRead: true })))
    .Item;
const update = (id: string, input: Omit<UpdateItemCommandInput, 'TableName' | 'Key'>) =>
  target.db.send(
    new UpdateItemCommand({ TableName: table, Key: { id: s(id) }, ReturnValues: 'ALL_NEW', ...input }),
  );

// Developer Guide, "Update expressions": SET (including "Incrementing and decrementing numeric
// attributes", "Appending elements to a list" with list_append, "Preventing overwrites of an existing
// attribute" with if_not_exists, "Adding nested map attributes"), REMOVE, ADD, DELETE.
describe('UpdateExpression', () => {
  test('SET a=:a, b=:b REMOVE c', async () => {
    await put({ id: s('u1'), a: s('0'), c: s('gone'), d: s('kept') });
    const out = await update('u1', {
      UpdateExpression: 'SET a=:a, b=:b REMOVE c',
      ExpressionAttributeValues: { ':a': s('1'), ':b': n(2) },
    });
    expect(out.Attributes).toEqual({ id: s('u1'), a: s('1'), b: n(2), d: s('kept') });
  });

  test('arithmetic: SET #c = #c + :one, d = d - :one', async () => {
    await put({ id: s('u2'), count: n(10), d: n('0.5') });
    const out = await update('u2', {
      UpdateExpression: 'SET #c = #c + :one, d = d - :one',
      ExpressionAttributeNames: { '#c': 'count' },
      ExpressionAttributeValues: { ':one': n(1) },
    });
    expect(out.Attributes).toEqual({ id: s('u2'), count: n(11), d: n('-0.5') });
  });

  test('if_not_exists keeps an existing value and sets an absent one', async () => {
    await put({ id: s('u3'), a: s('old') });
    const out = await update('u3', {
      UpdateExpression:
        'SET a = if_not_exists(a, :v), b = if_not_exists(b, :v), n1 = if_not_exists(n1, :zero) + :one',
      ExpressionAttributeValues: { ':v': s('new'), ':zero': n(0), ':one': n(1) },
    });
    expect(out.Attributes).toEqual({ id: s('u3'), a: s('old'), b: s('new'), n1: n(1) });
  });

  test('list_append at either end', async () => {
    await put({ id: s('u4'), l: { L: [s('b')] } });
    const out = await update('u4', {
      UpdateExpression: 'SET l = list_append(:front, l), m = list_append(l, :back)',
      ExpressionAttributeValues: { ':front': { L: [s('a')] }, ':back': { L: [s('c')] } },
    });
    // Every operand is read from the item as it was before the update.
    expect(out.Attributes).toEqual({ id: s('u4'), l: { L: [s('a'), s('b')] }, m: { L: [s('b'), s('c')] } });
  });

  test('nested paths: map member, list element, REMOVE of a list element', async () => {
    await put({ id: s('u5'), address: { M: { city: s('Oslo') } }, tags: { L: [s('x'), s('y'), s('z')] } });
    const out = await update('u5', {
      UpdateExpression: 'SET address.#z = :zip, #t[0] = :first REMOVE #t[1]',
      ExpressionAttributeNames: { '#z': 'zip', '#t': 'tags' },
      ExpressionAttributeValues: { ':zip': s('0150'), ':first': s('X') },
    });
    expect(out.Attributes).toEqual({
      id: s('u5'),
      address: { M: { city: s('Oslo'), zip: s('0150') } },
      tags: { L: [s('X'), s('z')] },
    });
  });

  // Developer Guide, "Update expressions", ADD: "If the attribute doesn't exist, ADD uses 0 as the
  // initial value" for a number; for a set, the elements are added. DELETE removes elements of a set.
  test('ADD to a number (absent: from 0) and to a set; DELETE from a set', async () => {
    await put({ id: s('u6'), qty: n(5), tags: { SS: ['a', 'b'] } });
    const out = await update('u6', {
      UpdateExpression: 'ADD qty :n, fresh :n, tags :more, newset :more',
      ExpressionAttributeValues: { ':n': n(-2), ':more': { SS: ['b', 'c'] } },
    });
    expect(out.Attributes?.qty).toEqual(n(3));
    expect(out.Attributes?.fresh).toEqual(n(-2));
    expect([...(out.Attributes?.tags?.SS ?? [])].sort()).toEqual(['a', 'b', 'c']);
    expect([...(out.Attributes?.newset?.SS ?? [])].sort()).toEqual(['b', 'c']);
    const deleted = await update('u6', {
      UpdateExpression: 'DELETE tags :gone',
      ExpressionAttributeValues: { ':gone': { SS: ['a', 'c'] } },
    });
    expect(deleted.Attributes?.tags).toEqual({ SS: ['b'] });
  });

  // Developer Guide, "Working with numbers": DynamoDB numbers have up to 38 digits of precision and
  // arithmetic on them is exact (decimal, not binary floating point).
  test('ADD and SET arithmetic are exact on 38-digit decimals', async () => {
    await put({ id: s('u7'), big: n('12345678901234567890123456789012345678'), tenths: n('0.1') });
    const out = await update('u7', {
      UpdateExpression: 'ADD big :one, tenths :two SET summed = :f + :g',
      ExpressionAttributeValues: {
        ':one': n(1),
        ':two': n('0.2'),
        ':f': n('1234567890123456789012345678901234567.1'),
        ':g': n('-0.1'),
      },
    });
    expect(out.Attributes?.big).toEqual(n('12345678901234567890123456789012345679'));
    expect(out.Attributes?.tenths).toEqual(n('0.3'));
    expect(out.Attributes?.summed).toEqual(n('1234567890123456789012345678901234567'));
  });

  // API Reference, UpdateItem: a key attribute cannot be updated.
  test('updating a key attribute is a ValidationException', async () => {
    const error = await refusal(
      update('u8', { UpdateExpression: 'SET id = :x', ExpressionAttributeValues: { ':x': s('other') } }),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toContain('This attribute is part of the key');
  });

  // Developer Guide, "Update expressions", ADD: "The ADD action supports only number and set data types."
  test('ADD of a string is a ValidationException', async () => {
    const error = await refusal(
      update('u9', { UpdateExpression: 'ADD a :s', ExpressionAttributeValues: { ':s': s('x') } }),
    );
    expect(error.name).toBe('ValidationException');
  });

  test('arithmetic on a string operand is a ValidationException', async () => {
    await put({ id: s('u10'), a: s('text') });
    const error = await refusal(
      update('u10', { UpdateExpression: 'SET a = a + :one', ExpressionAttributeValues: { ':one': n(1) } }),
    );
    expect(error.name).toBe('ValidationException');
    expect(await read('u10')).toEqual({ id: s('u10'), a: s('text') });
  });

  test('two actions on one path is a ValidationException', async () => {
    const error = await refusal(
      update('u11', {
        UpdateExpression: 'SET a = :x REMOVE a',
        ExpressionAttributeValues: { ':x': s('x') },
      }),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toContain('Two document paths overlap with each other');
  });
});

// Developer Guide, "Condition expressions" and "Comparison operator and function reference":
// comparators, BETWEEN, IN, AND/OR/NOT, attribute_exists, attribute_not_exists, attribute_type,
// begins_with, contains, size.
describe('ConditionExpression', () => {
  const item: Item = {
    id: s('c1'),
    version: n(7),
    status: s('PLACED'),
    name: s('widget-blue'),
    tags: { SS: ['red', 'sale'] },
    lines: { L: [s('a'), s('b'), s('c')] },
    entry: s('0007#placed'),
    legacy: { M: { v: n(3) } },
  };
  beforeAll(() => put(item));

  const holds = async (
    ConditionExpression: string,
    values: Item = {},
    names: Record<string, string> = {},
  ) => {
    try {
      await target.db.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { id: s('c1') },
          UpdateExpression: 'SET probe = :probe',
          ConditionExpression,
          ExpressionAttributeValues: { ':probe': s('x'), ...values },
          ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  };

  test.each([
    ['#v = :seven', true],
    ['#v <> :seven', false],
    ['#v < :eight AND #v >= :seven', true],
    ['#v > :eight OR #v <= :seven', true],
    ['NOT #v = :seven', false],
    ['#v BETWEEN :seven AND :eight', true],
    ['#v IN (:one, :eight)', false],
    ['#v IN (:one, :seven)', true],
    ['(attribute_not_exists(#v) OR #v < :eight) AND attribute_exists(#s)', true],
    ['attribute_not_exists(#v) OR #v < :seven', false],
  ])('%s → %s', async (condition, expected) => {
    const values = { ':one': n(1), ':seven': n(7), ':eight': n(8) };
    const used = Object.fromEntries(Object.entries(values).filter(([k]) => condition.includes(k)));
    const names = Object.fromEntries(
      Object.entries({ '#v': 'version', '#s': 'status' }).filter(([k]) => condition.includes(k)),
    );
    expect(await holds(condition, used, names)).toBe(expected);
  });

  test('functions: begins_with, contains (string and set), size, attribute_type', async () => {
    expect(await holds('begins_with(#n, :p)', { ':p': s('widget-') }, { '#n': 'name' })).toBe(true);
    expect(await holds('begins_with(#n, :p)', { ':p': s('blue') }, { '#n': 'name' })).toBe(false);
    expect(await holds('contains(#n, :p)', { ':p': s('blue') }, { '#n': 'name' })).toBe(true);
    expect(await holds('contains(tags, :t)', { ':t': s('sale') })).toBe(true);
    expect(await holds('contains(tags, :t)', { ':t': s('blue') })).toBe(false);
    expect(await holds('size(#l) = :three', { ':three': n(3) }, { '#l': 'lines' })).toBe(true);
    expect(await holds('size(#n) > :three', { ':three': n(3) }, { '#n': 'name' })).toBe(true);
    expect(await holds('attribute_type(tags, :ss)', { ':ss': s('SS') })).toBe(true);
    expect(await holds('attribute_type(tags, :l)', { ':l': s('L') })).toBe(false);
  });

  // The view guards of functions/shared/views.ts: entries compared as strings, and
  // '(attribute_not_exists(#0) OR #0<:0 OR #0.#v<:v0)' where #0 may be a string or a legacy map.
  // Developer Guide, "Comparison operator and function reference": comparing values of different types
  // evaluates to false (no error), and a path into a non-map does not exist.
  test('string ordering and mismatched types in the view guards', async () => {
    const guard = '(attribute_not_exists(#0) OR #0<:0 OR #0.#v<:v0)';
    const names = { '#0': 'entry', '#v': 'v' };
    expect(await holds(guard, { ':0': s('0008#paid'), ':v0': n(8) }, names)).toBe(true);
    expect(await holds(guard, { ':0': s('0006#old'), ':v0': n(6) }, names)).toBe(false);
    const legacy = { '#0': 'legacy', '#v': 'v' };
    // legacy is a map: a string never compares below it, but its v does.
    expect(await holds('#0<:0', { ':0': s('zzz') }, { '#0': 'legacy' })).toBe(false);
    expect(await holds(guard, { ':0': s('0004#x'), ':v0': n(4) }, legacy)).toBe(true);
    expect(await holds(guard, { ':0': s('0002#x'), ':v0': n(2) }, legacy)).toBe(false);
  });

  // Developer Guide, "Reserved words in DynamoDB": "If you need to write an expression containing an
  // attribute name that conflicts with a DynamoDB reserved word, you can define an expression attribute
  // name to use in the place of the reserved word."
  test('a reserved word used as a name is a ValidationException', async () => {
    const error = await refusal(holds('status = :p', { ':p': s('PLACED') }));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status',
    );
    expect(await holds('#s = :p', { ':p': s('PLACED') }, { '#s': 'status' })).toBe(true);
  });
});

// Developer Guide, "Expression attribute names" and "Expression attribute values": every placeholder used
// must be defined, and every one defined must be used.
describe('ExpressionAttributeNames and ExpressionAttributeValues', () => {
  test('an undefined value placeholder is a ValidationException', async () => {
    const error = await refusal(
      update('p1', {
        UpdateExpression: 'SET a = :a',
        ConditionExpression: 'b = :x',
        ExpressionAttributeValues: { ':a': s('1') },
      }),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :x',
    );
  });

  test('an undefined name placeholder is a ValidationException', async () => {
    const error = await refusal(
      update('p2', { UpdateExpression: 'SET #x = :a', ExpressionAttributeValues: { ':a': s('1') } }),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #x',
    );
  });

  test('an unused value is a ValidationException', async () => {
    const error = await refusal(
      update('p3', {
        UpdateExpression: 'SET a = :a',
        ExpressionAttributeValues: { ':a': s('1'), ':unused': s('2') },
      }),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}',
    );
  });

  test('an unused name is a ValidationException', async () => {
    const error = await refusal(
      update('p4', {
        UpdateExpression: 'SET a = :a',
        ExpressionAttributeNames: { '#unused': 'b' },
        ExpressionAttributeValues: { ':a': s('1') },
      }),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(
      'Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}',
    );
  });

  test('a syntax error is a ValidationException', async () => {
    const error = await refusal(
      update('p5', { UpdateExpression: 'SET a = ', ExpressionAttributeValues: {} }),
    );
    expect(error.name).toBe('ValidationException');
  });

  // A name placeholder stands for one attribute name, dots included (Developer Guide, "Expression
  // attribute names": "Attribute names containing dots").
  test('a placeholder for a name with a dot names a top-level attribute', async () => {
    const out = await update('p6', {
      UpdateExpression: 'SET #dotted = :a',
      ExpressionAttributeNames: { '#dotted': 'a.b' },
      ExpressionAttributeValues: { ':a': s('1') },
    });
    expect(out.Attributes).toEqual({ id: s('p6'), 'a.b': s('1') });
  });
});

// Developer Guide, "Projection expressions": top-level attributes, nested map members and list elements.
describe('ProjectionExpression', () => {
  test('GetItem returns only the projected paths', async () => {
    await put({
      id: s('pr'),
      a: s('1'),
      b: s('2'),
      address: { M: { city: s('Oslo'), zip: s('0150') } },
      lines: { L: [s('x'), s('y')] },
    });
    const { Item } = await target.db.send(
      new GetItemCommand({
        TableName: table,
        Key: { id: s('pr') },
        ProjectionExpression: 'a, address.city, #l[1], nothere',
        ExpressionAttributeNames: { '#l': 'lines' },
      }),
    );
    expect(Item).toEqual({ a: s('1'), address: { M: { city: s('Oslo') } }, lines: { L: [s('y')] } });
  });

  test('overlapping paths are a ValidationException', async () => {
    const error = await refusal(
      target.db.send(
        new GetItemCommand({
          TableName: table,
          Key: { id: s('pr') },
          ProjectionExpression: 'address, address.city',
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toContain('Two document paths overlap with each other');
  });
});
