import { RESERVED_WORDS } from '../../dynamodb/expression-reserved';
import {
  compileRequest,
  type KeySchema,
  type RequestExpressions,
  sortMatches,
} from '../../dynamodb/expressions';
import {
  type AttributeValue,
  addNumbers,
  compareKeyValues,
  compareNumbers,
  type Item,
  itemSize,
  keyString,
  normalizeNumber,
  subtractNumbers,
  validateValue,
  valuesEqual,
} from '../../dynamodb/values';

type Values = Record<string, AttributeValue>;

const compile = (
  expressions: RequestExpressions,
  values?: Values,
  names?: Record<string, string>,
  key?: KeySchema,
) => compileRequest(expressions, names, values, key);

const condition = (text: string, values?: Values, names?: Record<string, string>) =>
  compile({ condition: text }, values, names).condition!;

const update = (text: string, values?: Values, names?: Record<string, string>) =>
  compile({ update: text }, values, names).update!;

const b64 = (bytes: number[]) => Buffer.from(bytes).toString('base64');

const item: Item = {
  id: { S: 'order-1' },
  amount: { N: '42.50' },
  qty: { N: '3' },
  tags: { SS: ['new', 'paid'] },
  scores: { NS: ['1', '2.5'] },
  entries: { L: [{ S: 'a' }, { N: '2' }, { M: { sku: { S: 'x' } } }] },
  address: { M: { city: { S: 'Oslo' }, zip: { S: '0150' } } },
  flag: { BOOL: true },
  nothing: { NULL: true },
  bin: { B: b64([1, 2, 3]) },
  blank: { S: '' },
};

// Developer Guide: "Supported data types and naming rules in Amazon DynamoDB" (numbers: 38 digits, range).
describe('numbers', () => {
  it('normalizes to the text DynamoDB returns', () => {
    expect(normalizeNumber('1.50')).toBe('1.5');
    expect(normalizeNumber('+3')).toBe('3');
    expect(normalizeNumber('1e2')).toBe('100');
    expect(normalizeNumber('-0')).toBe('0');
    expect(normalizeNumber('-0.000')).toBe('0');
    expect(normalizeNumber('0.001')).toBe('0.001');
    expect(normalizeNumber('00012.3400')).toBe('12.34');
    expect(normalizeNumber('1.5E-3')).toBe('0.0015');
    expect(normalizeNumber('.5')).toBe('0.5');
    expect(normalizeNumber('-12e-1')).toBe('-1.2');
    expect(normalizeNumber('1E125')).toBe(`1${'0'.repeat(125)}`);
  });

  it('compares numerically, beyond double precision', () => {
    expect(compareNumbers('10', '9')).toBe(1);
    expect(compareNumbers('-10', '9')).toBe(-1);
    expect(compareNumbers('1.50', '1.5')).toBe(0);
    expect(compareNumbers('-1.5', '-1.25')).toBe(-1);
    expect(compareNumbers('0', '-0.0')).toBe(0);
    expect(
      compareNumbers('12345678901234567890123456789012345678', '12345678901234567890123456789012345677'),
    ).toBe(1);
    expect(compareNumbers('1e-130', '0')).toBe(1);
    expect(compareNumbers('99', '1e2')).toBe(-1);
  });

  it('adds and subtracts exactly', () => {
    expect(addNumbers('0.1', '0.2')).toBe('0.3');
    expect(addNumbers('1', '2')).toBe('3');
    expect(subtractNumbers('5', '5')).toBe('0');
    expect(subtractNumbers('1', '1.001')).toBe('-0.001');
    expect(addNumbers('99999999999999999999999999999999999999', '-1')).toBe(
      '99999999999999999999999999999999999998',
    );
    expect(addNumbers('9007199254740993', '1')).toBe('9007199254740994');
  });

  it('refuses results beyond 38 digits or the range', () => {
    expect(() => addNumbers('99999999999999999999999999999999999999', '1')).not.toThrow();
    expect(() => addNumbers('1e30', '1e-30')).toThrow(
      'Attempting to store more than 38 significant digits in a Number',
    );
    expect(() => addNumbers('9.9999999999999999999999999999999999999E+125', '1e125')).toThrow(
      'Number overflow',
    );
  });
});

// Developer Guide: "Supported data types and naming rules" and the API Reference's AttributeValue.
describe('validateValue', () => {
  const error = (value: unknown, where = '') => {
    try {
      validateValue(value, where);
    } catch (e) {
      return (e as Error).message;
    }
    return undefined;
  };

  it('accepts every type, empty strings and binaries included', () => {
    for (const value of Object.values(item)) expect(error(value)).toBeUndefined();
    expect(error({ B: '' })).toBeUndefined();
    expect(error({ N: '9.9999999999999999999999999999999999999E+125' })).toBeUndefined();
    expect(error({ N: '-1E-130' })).toBeUndefined();
  });

  it('words malformed values as DynamoDB does', () => {
    const empty = 'Supplied AttributeValue is empty, must contain exactly one of the supported datatypes';
    expect(error({})).toBe(empty);
    expect(error({ X: 'a' })).toBe(empty);
    expect(error({ M: { a: {} } })).toBe(empty);
    expect(error({ L: [{}] })).toBe(empty);
    expect(error({ S: 'a', N: '1' })).toBe(
      'Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes',
    );
    expect(error({ NULL: false })).toBe(
      'One or more parameter values were invalid: Null attribute value types must have the value of true',
    );
  });

  it('checks numbers', () => {
    expect(error({ N: 'b' })).toBe('The parameter cannot be converted to a numeric value: b');
    expect(error({ N: '' })).toBe('The parameter cannot be converted to a numeric value');
    expect(error({ N: '123456789012345678901234567890123456789' })).toBe(
      'Attempting to store more than 38 significant digits in a Number',
    );
    expect(error({ N: '1e126' })).toMatch(/^Number overflow/);
    expect(error({ N: '-1e-131' })).toMatch(/^Number underflow/);
    expect(error({ N: '1000000000000000000000000000000000000000000' })).toBeUndefined();
  });

  it('checks sets and binaries', () => {
    expect(error({ SS: [] })).toBe(
      'One or more parameter values were invalid: An string set  may not be empty',
    );
    expect(error({ NS: [] })).toBe(
      'One or more parameter values were invalid: An number set  may not be empty',
    );
    expect(error({ BS: [] })).toBe(
      'One or more parameter values were invalid: Binary sets should not be empty',
    );
    expect(error({ SS: ['a', 'a'] })).toBe(
      'One or more parameter values were invalid: Input collection [a, a] contains duplicates.',
    );
    expect(error({ NS: ['1', '1.0'] })).toBe('Input collection contains duplicates');
    expect(error({ BS: ['Yg==', 'Yg=='] })).toBe(
      'One or more parameter values were invalid: Input collection [Yg==, Yg==]of type BS contains duplicates.',
    );
    expect(error({ B: 'abc' })).toMatch(/Base64/);
  });

  it('words ExpressionAttributeValues entries with their key', () => {
    expect(error({ N: 'x' }, ':v')).toBe(
      'ExpressionAttributeValues contains invalid value: The parameter cannot be converted to a numeric value: x for key :v',
    );
  });
});

// Developer Guide: "Working with items" (key ordering), "Item sizes and formats".
describe('keys, equality and size', () => {
  it('orders strings by UTF-8 bytes, numbers numerically, binaries unsigned', () => {
    // U+FF5E (3 UTF-8 bytes, EF BD 9E) sorts before U+1F600 (F0 ...), though its UTF-16 unit is larger.
    expect(compareKeyValues({ S: '\uff5e' }, { S: '😀' })).toBe(-1);
    expect(compareKeyValues({ S: 'a' }, { S: 'B' })).toBe(1);
    expect(compareKeyValues({ S: 'ab' }, { S: 'a' })).toBe(1);
    expect(compareKeyValues({ N: '10' }, { N: '9' })).toBe(1);
    expect(compareKeyValues({ B: b64([0x7f]) }, { B: b64([0x80]) })).toBe(-1);
    expect(compareKeyValues({ B: b64([1, 2]) }, { B: b64([1]) })).toBe(1);
  });

  it('names key values uniquely', () => {
    expect(keyString({ N: '1.50' })).toBe(keyString({ N: '1.5' }));
    expect(keyString({ S: '1' })).not.toBe(keyString({ N: '1' }));
    expect(keyString({ B: 'AQI=' })).toBe('B:AQI=');
  });

  it('compares deeply', () => {
    expect(valuesEqual({ N: '1.0' }, { N: '1' })).toBe(true);
    expect(valuesEqual({ SS: ['a', 'b'] }, { SS: ['b', 'a'] })).toBe(true);
    expect(valuesEqual({ NS: ['1', '2'] }, { NS: ['2.0', '1'] })).toBe(true);
    expect(valuesEqual({ L: [{ S: 'a' }, { S: 'b' }] }, { L: [{ S: 'b' }, { S: 'a' }] })).toBe(false);
    expect(valuesEqual({ M: { a: { N: '1' } } }, { M: { a: { N: '1.00' } } })).toBe(true);
    expect(valuesEqual({ M: { a: { N: '1' } } }, { M: { b: { N: '1' } } })).toBe(false);
    expect(valuesEqual({ S: '1' }, { N: '1' })).toBe(false);
  });

  it('sizes items exactly as the cost model does', () => {
    // The cost model's rules (formerly local/capacity.ts): names + values; N by digits/2 + 1; L/M 3 + 1 per element.
    expect(itemSize({ amount: { N: '42.50' } })).toBe(6 + 3);
    expect(itemSize({ tags: { SS: ['new', 'paid'] } })).toBe(4 + 7);
    expect(itemSize({ scores: { NS: ['1', '2.5'] } })).toBe(6 + 2 + 2);
    expect(itemSize({ m: { M: { city: { S: 'Oslo' } } } })).toBe(1 + 3 + 1 + 4 + 4);
    expect(itemSize({ bin: { B: b64([1, 2, 3]) }, f: { BOOL: false }, z: { NULL: true } })).toBe(
      3 + 3 + 2 + 2,
    );
    expect(itemSize(undefined)).toBe(0);
    expect(itemSize({ a: { S: 'é' } })).toBe(3);
    expect(itemSize({ n: { N: '12345' } })).toBe(5);
    expect(itemSize({ l: { L: [{ BOOL: true }] } })).toBe(1 + 3 + 1 + 1);
  });
});

// Developer Guide: "Condition and filter expressions, operators, and functions in DynamoDB".
describe('condition expressions', () => {
  const v: Values = {
    ':n': { N: '42.5' },
    ':s': { S: 'order' },
    ':low': { N: '1' },
    ':high': { N: '3' },
    ':t': { S: 'SS' },
    ':city': { S: 'Oslo' },
    ':tag': { S: 'paid' },
    ':x': { S: 'x' },
  };
  const holds = (text: string, values: Values = {}, names?: Record<string, string>) => {
    const used = Object.fromEntries(Object.entries(v).filter(([k]) => new RegExp(`${k}\\b`).test(text)));
    const all = { ...used, ...values };
    return condition(text, Object.keys(all).length > 0 ? all : undefined, names)(item);
  };

  it('compares', () => {
    expect(holds('amount = :n')).toBe(true);
    expect(holds('amount <> :n')).toBe(false);
    expect(holds('amount >= :n AND amount <= :n')).toBe(true);
    expect(holds('amount > :n OR qty < :high')).toBe(false);
    expect(holds('id > :s')).toBe(true);
    expect(holds('absent = :n')).toBe(false);
    expect(holds('absent <> :n')).toBe(true);
    expect(holds('id < :n')).toBe(false); // different types: false, not an error
    expect(holds('address.city = :city')).toBe(true);
    expect(holds('entries[2].sku = :x')).toBe(true);
    expect(holds('entries[9] = :x')).toBe(false);
  });

  it('supports BETWEEN and IN', () => {
    expect(holds('qty BETWEEN :low AND :high')).toBe(true);
    expect(holds('amount BETWEEN :low AND :high')).toBe(false);
    expect(holds('qty IN (:low, :high)')).toBe(true);
    expect(holds('qty IN (:low, :n)')).toBe(false);
  });

  it('applies NOT before AND before OR, and parentheses', () => {
    expect(holds('NOT amount = :n AND qty = :high')).toBe(false);
    expect(holds('amount = :n OR qty = :low AND qty = :low')).toBe(true);
    expect(holds('(amount = :n OR qty = :low) AND qty = :low')).toBe(false);
    expect(holds('NOT (amount = :n AND qty = :low)')).toBe(true);
    expect(holds('(amount) = :n')).toBe(true);
  });

  it('supports the functions', () => {
    expect(holds('attribute_exists(address.city) AND attribute_not_exists(absent)')).toBe(true);
    expect(holds('attribute_exists(nothing)')).toBe(true);
    expect(holds('attribute_type(tags, :t)')).toBe(true);
    expect(holds('begins_with(id, :s)')).toBe(true);
    expect(holds('begins_with(bin, :p)', { ':p': { B: b64([1, 2]) } })).toBe(true);
    expect(holds('contains(tags, :tag)')).toBe(true);
    expect(holds('contains(id, :p)', { ':p': { S: 'der-' } })).toBe(true);
    expect(holds('contains(scores, :p)', { ':p': { N: '2.50' } })).toBe(true);
    expect(holds('contains(entries, :p)', { ':p': { S: 'a' } })).toBe(true);
    expect(holds('size(tags) = :p', { ':p': { N: '2' } })).toBe(true);
    expect(holds('size(address) < :p', { ':p': { N: '3' } })).toBe(true);
    expect(holds('size(id) = :p', { ':p': { N: '7' } })).toBe(true);
    expect(holds('size(amount) = :p', { ':p': { N: '1' } })).toBe(false);
    expect(holds('size(blank) = :p', { ':p': { N: '0' } })).toBe(true);
  });

  it('resolves names, including reserved words through placeholders', () => {
    expect(holds('#s = :s', { ':s': { S: 'order-1' } }, { '#s': 'id' })).toBe(true);
    expect(holds('#a.#c = :city', {}, { '#a': 'address', '#c': 'city' })).toBe(true);
    expect(
      condition('#status = :s', { ':s': { S: 'x' } }, { '#status': 'status' })({ status: { S: 'x' } }),
    ).toBe(true);
  });

  it('evaluates against a missing item as an empty one', () => {
    expect(condition('attribute_not_exists(id)')(undefined)).toBe(true);
  });

  it('lists the top-level names it reads', () => {
    expect(condition('a.b = :v AND size(c) > :v', { ':v': { N: '1' } }).names).toEqual(['a', 'c']);
  });

  it('reports syntax errors with token and context', () => {
    expect(() => condition('a = ')).toThrow(
      'Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "= "',
    );
    expect(() => condition('a == :v', { ':v': { S: 'x' } })).toThrow(
      'Invalid ConditionExpression: Syntax error; token: "=", near: "== :v"',
    );
    expect(() => compile({ filter: 'a AND b' })).toThrow(
      'Invalid FilterExpression: Syntax error; token: "AND", near: "a AND b"',
    );
    expect(() => condition('')).toThrow('Invalid ConditionExpression: The expression can not be empty;');
  });

  it('refuses reserved words, unknown functions and misused functions', () => {
    expect(() => condition('status = :v', { ':v': { S: 'x' } })).toThrow(
      'Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status',
    );
    expect(() => condition('foo(a)')).toThrow(
      'Invalid ConditionExpression: Invalid function name; function: foo',
    );
    expect(() => condition('begins_with(a, :v) = :v', { ':v': { S: 'x' } })).toThrow(
      'Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: begins_with',
    );
    expect(() => condition('size(a)')).toThrow('function: size');
    expect(() => condition('attribute_exists(a, b)')).toThrow(
      'Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2',
    );
    expect(() => condition('((a = :v))', { ':v': { S: 'x' } })).toThrow(
      'The expression has redundant parentheses;',
    );
  });

  it('checks operand types at parse time', () => {
    expect(() => condition('a < :v', { ':v': { BOOL: true } })).toThrow(
      'Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: <, operand type: BOOL',
    );
    expect(() => condition('begins_with(a, :v)', { ':v': { N: '1' } })).toThrow(
      'operator or function: begins_with, operand type: N',
    );
    expect(() => condition('attribute_type(a, :v)', { ':v': { S: 'X' } })).toThrow(
      'Invalid attribute type name found; type: X',
    );
    expect(() => condition('attribute_exists(:v)', { ':v': { S: 'x' } })).toThrow(
      'Operator or function requires a document path; operator or function: attribute_exists',
    );
    expect(() => condition('a BETWEEN :b AND :a', { ':a': { S: 'a' }, ':b': { N: '1' } })).toThrow(
      'Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}',
    );
    expect(() => condition('a BETWEEN :b AND :a', { ':a': { S: 'a' }, ':b': { S: 'b' } })).toThrow(
      'The BETWEEN operator requires upper bound to be greater than or equal to lower bound',
    );
    expect(() => condition('a = a')).toThrow(
      'The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a]',
    );
    const list = Array.from({ length: 101 }, (_, i) => `:v${i}`);
    const values = Object.fromEntries(list.map((k) => [k, { N: '1' }]));
    expect(() => condition(`a IN (${list.join(', ')})`, values)).toThrow(
      'The IN operator is provided with too many operands',
    );
  });
});

// Developer Guide: "Expression attribute names (aliases)" and "Using expression attribute values".
describe('expression attribute names and values', () => {
  it('refuses placeholders not defined', () => {
    expect(() => condition('a = :x')).toThrow(
      'Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :x',
    );
    expect(() => update('SET #x = :v', { ':v': { S: 'a' } })).toThrow(
      'Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #x',
    );
  });

  it('refuses placeholders unused across all expressions of the request', () => {
    expect(() => compile({ condition: 'a = :a' }, { ':a': { S: 'a' }, ':b': { S: 'b' } })).toThrow(
      'Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}',
    );
    expect(() => compile({ projection: 'a' }, undefined, { '#n': 'x' })).toThrow(
      'Value provided in ExpressionAttributeNames unused in expressions: keys: {#n}',
    );
    // Used by different expressions of one request: fine.
    expect(() =>
      compile(
        { condition: '#a = :a', update: 'SET b = :b', projection: '#c' },
        { ':a': { S: 'a' }, ':b': { S: 'b' } },
        {
          '#a': 'a',
          '#c': 'c',
        },
      ),
    ).not.toThrow();
  });

  it('checks the maps themselves', () => {
    expect(() => compile({}, { ':a': { S: 'a' } })).toThrow(
      'ExpressionAttributeValues can only be specified when using expressions',
    );
    expect(() => compile({ projection: 'a' }, undefined, {})).toThrow(
      'ExpressionAttributeNames must not be empty',
    );
    expect(() => compile({ condition: 'a = :a' }, { ':a': { S: 'a' }, b: { S: 'b' } })).toThrow(
      'ExpressionAttributeValues contains invalid key: Syntax error; key: "b"',
    );
    expect(() => compile({ condition: 'a = :a' }, { ':a': { SS: [] } })).toThrow(
      'ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: An string set  may not be empty for key :a',
    );
  });

  it('knows the full reserved word list', () => {
    expect(RESERVED_WORDS.size).toBe(573);
    for (const word of ['ABORT', 'NAME', 'DATA', 'ZONE', 'TTL', 'URL'])
      expect(RESERVED_WORDS.has(word)).toBe(true);
    expect(() => compile({ projection: 'id, Name' })).toThrow('reserved keyword: Name');
  });
});

// Developer Guide: "Using update expressions in DynamoDB".
describe('update expressions', () => {
  it('SETs values, sums, differences, if_not_exists and list_append', () => {
    const apply = update(
      'SET amount = amount + :one, #c = #c - :one, label = if_not_exists(label, :s), entries = list_append(entries, :l), address.city = :s',
      { ':one': { N: '0.5' }, ':s': { S: 'new' }, ':l': { L: [{ S: 'z' }] } },
      { '#c': 'qty' },
    );
    const after = apply(item);
    expect(after.amount).toEqual({ N: '43' });
    expect(after.qty).toEqual({ N: '2.5' });
    expect(after.label).toEqual({ S: 'new' });
    expect(after.entries!.L).toHaveLength(4);
    expect(after.address).toEqual({ M: { city: { S: 'new' }, zip: { S: '0150' } } });
    // The original item is untouched.
    expect(item.address!.M!.city).toEqual({ S: 'Oslo' });
    expect(item.entries!.L).toHaveLength(3);
  });

  it('reads every operand from the item as it was', () => {
    const after = update('SET a = b, b = a')({ a: { S: '1' }, b: { S: '2' } });
    expect(after).toEqual({ a: { S: '2' }, b: { S: '1' } });
  });

  it('sets list elements, appending past the end', () => {
    const apply = update('SET entries[1] = :v, entries[10] = :w', { ':v': { S: 'b' }, ':w': { S: 'end' } });
    expect(apply(item).entries!.L).toEqual([
      { S: 'a' },
      { S: 'b' },
      { M: { sku: { S: 'x' } } },
      { S: 'end' },
    ]);
  });

  it('REMOVEs attributes and list elements by their original positions', () => {
    const after = update('REMOVE flag, entries[0], entries[2], address.zip, absent.deep')(item);
    expect(after.flag).toBeUndefined();
    expect(after.entries!.L).toEqual([{ N: '2' }]);
    expect(after.address).toEqual({ M: { city: { S: 'Oslo' } } });
  });

  it('ADDs numbers and set members, creating missing attributes', () => {
    const apply = update('ADD qty :one, tags :tags, fresh :one, newset :tags', {
      ':one': { N: '1' },
      ':tags': { SS: ['paid', 'shipped'] },
    });
    const after = apply(item);
    expect(after.qty).toEqual({ N: '4' });
    expect(after.tags).toEqual({ SS: ['new', 'paid', 'shipped'] });
    expect(after.fresh).toEqual({ N: '1' });
    expect(after.newset).toEqual({ SS: ['paid', 'shipped'] });
  });

  it('DELETEs set members, removing an emptied set', () => {
    expect(update('DELETE tags :t', { ':t': { SS: ['new'] } })(item).tags).toEqual({ SS: ['paid'] });
    expect(update('DELETE tags :t', { ':t': { SS: ['new', 'paid'] } })(item).tags).toBeUndefined();
    expect(update('DELETE scores :t', { ':t': { NS: ['2.50'] } })(item).scores).toEqual({ NS: ['1'] });
    expect(update('DELETE absent :t', { ':t': { SS: ['x'] } })(item).absent).toBeUndefined();
  });

  it('accepts clauses in any order, each once', () => {
    const apply = update('REMOVE flag SET a = :v ADD qty :n', { ':v': { S: 'x' }, ':n': { N: '1' } });
    expect(apply(item)).toMatchObject({ a: { S: 'x' }, qty: { N: '4' } });
    expect(apply.names).toEqual(['flag', 'a', 'qty']);
    expect(() => update('SET a = :v SET b = :v', { ':v': { S: 'x' } })).toThrow(
      'Invalid UpdateExpression: The "SET" section can only be used once in an update expression;',
    );
  });

  it('refuses overlapping and conflicting paths', () => {
    expect(() => update('SET a = :v REMOVE a', { ':v': { S: 'x' } })).toThrow(
      'Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]',
    );
    expect(() => update('SET a.b = :v, a = :v', { ':v': { S: 'x' } })).toThrow(
      'path one: [a, b], path two: [a]',
    );
    expect(() => update('SET a[0] = :v, a.b = :v', { ':v': { S: 'x' } })).toThrow(
      'Two document paths conflict with each other',
    );
  });

  it('refuses wrong types and invalid paths', () => {
    expect(() => update('SET id = id + :n', { ':n': { N: '1' } })(item)).toThrow(
      'An operand in the update expression has an incorrect data type',
    );
    expect(() => update('SET a = :s + :n', { ':n': { N: '1' }, ':s': { S: 'x' } })).toThrow(
      'Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: +, operand type: S',
    );
    expect(() => update('ADD id :n', { ':n': { N: '1' } })(item)).toThrow(
      'An operand in the update expression has an incorrect data type',
    );
    expect(() => update('ADD a :s', { ':s': { S: 'x' } })).toThrow(
      'Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING',
    );
    expect(() => update('DELETE a :n', { ':n': { N: '1' } })).toThrow(
      'operator: DELETE, operand type: NUMBER',
    );
    expect(() => update('SET absent.child = :v', { ':v': { S: 'x' } })(item)).toThrow(
      'The document path provided in the update expression is invalid for update',
    );
    expect(() => update('SET id[0] = :v', { ':v': { S: 'x' } })(item)).toThrow('invalid for update');
    expect(() => update('SET a = absent')(item)).toThrow(
      'The provided expression refers to an attribute that does not exist in the item',
    );
    expect(() => update('SET a = list_append(:v, entries)', { ':v': { S: 'x' } })).toThrow(
      'operator or function: list_append, operand type: S',
    );
    expect(() => update('SET qty = qty + :n', { ':n': { N: '1e125' } })({ qty: { N: '9.9e125' } })).toThrow(
      'Number overflow',
    );
  });

  it('reports syntax errors', () => {
    expect(() => update('ADD hits : incr', { ':incr': { N: '1' } })).toThrow(
      'Invalid UpdateExpression: Syntax error; token: ":", near: "hits : incr"',
    );
    expect(() => update('INVALID SYNTAX HERE')).toThrow(
      'Syntax error; token: "INVALID", near: "INVALID SYNTAX"',
    );
    expect(() => update('SET a = :v,', { ':v': { S: 'x' } })).toThrow('token: "<EOF>"');
  });
});

// Developer Guide: "Using projection expressions in DynamoDB".
describe('projection expressions', () => {
  const project = (text: string, names?: Record<string, string>) =>
    compile({ projection: text }, undefined, names).projection!;

  it('keeps top-level attributes', () => {
    expect(project('id, amount, absent')(item)).toEqual({ id: item.id, amount: item.amount });
  });

  it('keeps the nested structure of projected paths', () => {
    expect(project('address.city, entries[2].sku, entries[0], #t', { '#t': 'tags' })(item)).toEqual({
      address: { M: { city: { S: 'Oslo' } } },
      entries: { L: [{ S: 'a' }, { M: { sku: { S: 'x' } } }] },
      tags: item.tags,
    });
  });

  it('refuses overlapping paths', () => {
    expect(() => project('address, address.city')).toThrow(
      'Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [address], path two: [address, city]',
    );
  });
});

// Developer Guide: "Key condition expressions for the Query operation".
describe('key condition expressions', () => {
  const schema: KeySchema = { hash: 'pk', range: 'sk', types: { pk: 'S', sk: 'N' } };
  const key = (text: string, values: Values, names?: Record<string, string>, keys = schema) =>
    compile({ keyCondition: text }, values, names, keys).keyCondition!;

  it('reads the partition value and one sort condition', () => {
    expect(key('pk = :p', { ':p': { S: 'a' } })).toEqual({ partitionValue: { S: 'a' } });
    expect(key('pk = :p AND sk >= :s', { ':p': { S: 'a' }, ':s': { N: '5' } }).sort).toEqual({
      op: '>=',
      values: [{ N: '5' }],
    });
    expect(
      key(
        '#s BETWEEN :a AND :b AND #p = :p',
        { ':p': { S: 'a' }, ':a': { N: '1' }, ':b': { N: '2' } },
        {
          '#s': 'sk',
          '#p': 'pk',
        },
      ).sort,
    ).toEqual({ op: 'BETWEEN', values: [{ N: '1' }, { N: '2' }] });
    const strings: KeySchema = { hash: 'pk', range: 'sk' };
    expect(
      key('pk = :p AND begins_with(sk, :s)', { ':p': { S: 'a' }, ':s': { S: 'x#' } }, undefined, strings)
        .sort,
    ).toEqual({
      op: 'begins_with',
      values: [{ S: 'x#' }],
    });
    expect(key(':s > sk AND pk = :p', { ':p': { S: 'a' }, ':s': { N: '1' } }).sort!.op).toBe('<');
  });

  it('refuses what DynamoDB refuses', () => {
    const v = { ':p': { S: 'a' }, ':s': { N: '1' } };
    expect(() => key('sk = :s', { ':s': { N: '1' } })).toThrow(
      'Query condition missed key schema element: pk',
    );
    expect(() => key('pk = :p AND extra = :s', v)).toThrow('Query condition missed key schema element: sk');
    expect(() => key('pk > :p', { ':p': { S: 'a' } })).toThrow('Query key condition not supported');
    expect(() => key('pk = :p OR sk = :s', v)).toThrow(
      'Invalid KeyConditionExpression: Invalid operator used in KeyConditionExpression: OR',
    );
    expect(() => key('pk = :p AND sk <> :s', v)).toThrow(
      'Invalid operator used in KeyConditionExpression: <>',
    );
    expect(() => key('pk = :p AND sk = :s AND sk = :s', v)).toThrow(
      'KeyConditionExpressions must only contain one condition per key',
    );
    expect(() => key('pk = :s', { ':s': { N: '1' } })).toThrow(
      'Condition parameter type does not match schema type',
    );
    expect(() => key('pk = :p AND begins_with(sk, :p)', { ':p': { S: 'a' } })).toThrow();
  });

  it('matches sort values', () => {
    expect(sortMatches({ op: 'BETWEEN', values: [{ N: '1' }, { N: '3' }] }, { N: '2' })).toBe(true);
    expect(sortMatches({ op: 'begins_with', values: [{ S: 'ab' }] }, { S: 'abc' })).toBe(true);
    expect(sortMatches({ op: '<', values: [{ S: 'b' }] }, { S: 'c' })).toBe(false);
  });
});

describe('performance', () => {
  it('evaluates a cached filter over many items quickly', () => {
    const items: Item[] = Array.from({ length: 20000 }, (_, i) => ({
      id: { S: `id-${i}` },
      price: { N: String(i % 100) },
      kind: { S: i % 2 ? 'a' : 'b' },
    }));
    const values = { ':min': { N: '50' }, ':k': { S: 'a' } };
    const started = performance.now();
    let matched = 0;
    for (let round = 0; round < 10; round++) {
      const filter = compile({ filter: 'price >= :min AND #k = :k' }, values, { '#k': 'kind' }).filter!;
      for (const entry of items) if (filter(entry)) matched++;
    }
    expect(matched).toBe(10 * 5000);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
