/**
 * DynamoDB attribute values as they travel on the wire (DynamoDB JSON), and
 * the arithmetic DynamoDB applies to them: validation with DynamoDB's own
 * wording, exact decimal numbers (38 significant digits, never JS floats;
 * numbers.ts),
 * key ordering, equality and item size.
 */
import { DynamoDbError, validation } from './errors';
import { compareNumbers, normalizeNumber, SMALL_INTEGER, storableDecimal } from './numbers';

export { addNumbers, compareNumbers, normalizeNumber, subtractNumbers } from './numbers';

/** One attribute value; a valid one has exactly one member set. */
export interface AttributeValue {
  S?: string;
  N?: string;
  B?: string;
  BOOL?: boolean;
  NULL?: boolean;
  SS?: string[];
  NS?: string[];
  BS?: string[];
  L?: AttributeValue[];
  M?: Record<string, AttributeValue>;
}

export type Item = Record<string, AttributeValue>;

export type AttributeType = 'S' | 'N' | 'B' | 'BOOL' | 'NULL' | 'SS' | 'NS' | 'BS' | 'L' | 'M';

const TYPES = new Set<string>(['S', 'N', 'B', 'BOOL', 'NULL', 'SS', 'NS', 'BS', 'L', 'M']);

/** The type of a validated value (its one member). */
export function typeOf(value: AttributeValue): AttributeType {
  for (const key in value) return key as AttributeType;
  return 'NULL';
}

/** A member of a wire object, without reaching into Object.prototype (names like `constructor`). */
export function own<T>(record: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

// ---------------------------------------------------------------------------
// Strings and binaries.

/**
 * Compares strings by their UTF-8 bytes, which is code point order: UTF-16
 * code units agree with it except that surrogates (U+D800..U+DFFF, i.e.
 * code points above U+FFFF) must sort after U+E000..U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

export const bytesOf = (base64: string): Buffer => Buffer.from(base64, 'base64');

/** Compares binaries as unsigned bytes. */
export function compareBinary(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(bytesOf(a), bytesOf(b));
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** DynamoDB's sort-key order: S by UTF-8 bytes, N numerically, B by unsigned bytes. */
export function compareKeyValues(a: AttributeValue, b: AttributeValue): number {
  if (a.S !== undefined && b.S !== undefined) return compareUtf8(a.S, b.S);
  if (a.N !== undefined && b.N !== undefined) return compareNumbers(a.N, b.N);
  if (a.B !== undefined && b.B !== undefined) return compareBinary(a.B, b.B);
  throw validation('The provided key element does not match the schema');
}

/** A string naming a key value uniquely within its type, for Map keys. */
export function keyString(value: AttributeValue): string {
  if (value.S !== undefined) return `S:${value.S}`;
  if (value.N !== undefined) return `N:${normalizeNumber(value.N)}`;
  if (value.B !== undefined) return `B:${bytesOf(value.B).toString('base64')}`;
  throw validation('The provided key element does not match the schema');
}

// ---------------------------------------------------------------------------
// Equality.

function setsEqual(a: string[], b: string[], member: (x: string) => string): boolean {
  if (a.length !== b.length) return false;
  const members = new Set(a.map(member));
  return b.every((x) => members.has(member(x)));
}

/** Deep equality as DynamoDB's `=`: numbers numerically, sets unordered, lists ordered, maps by key. */
export function valuesEqual(a: AttributeValue, b: AttributeValue): boolean {
  if (a.S !== undefined) return a.S === b.S;
  if (a.N !== undefined) return b.N !== undefined && compareNumbers(a.N, b.N) === 0;
  if (a.B !== undefined) return b.B !== undefined && compareBinary(a.B, b.B) === 0;
  if (a.BOOL !== undefined) return a.BOOL === b.BOOL;
  if (a.NULL !== undefined) return b.NULL !== undefined;
  if (a.SS !== undefined) return b.SS !== undefined && setsEqual(a.SS, b.SS, (s) => s);
  if (a.NS !== undefined) return b.NS !== undefined && setsEqual(a.NS, b.NS, normalizeNumber);
  if (a.BS !== undefined)
    return b.BS !== undefined && setsEqual(a.BS, b.BS, (s) => bytesOf(s).toString('hex'));
  if (a.L !== undefined) {
    const other = b.L;
    return (
      other !== undefined && a.L.length === other.length && a.L.every((x, i) => valuesEqual(x, other[i]!))
    );
  }
  if (a.M !== undefined) {
    const other = b.M;
    if (other === undefined) return false;
    const keys = Object.keys(a.M);
    if (keys.length !== Object.keys(other).length) return false;
    return keys.every((k) => {
      const y = own(other, k);
      return y !== undefined && valuesEqual(a.M![k]!, y);
    });
  }
  return false;
}

// ---------------------------------------------------------------------------
// Validation.

const EMPTY = 'Supplied AttributeValue is empty, must contain exactly one of the supported datatypes';
const SEVERAL =
  'Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes';
const INVALID = 'One or more parameter values were invalid: ';

function fail(message: string, where: string): never {
  throw validation(
    where ? `ExpressionAttributeValues contains invalid value: ${message} for key ${where}` : message,
  );
}

function serialization(type: string): never {
  throw new DynamoDbError(
    'SerializationException',
    `Unexpected value for the ${type} member of an AttributeValue`,
  );
}

function checkStrings(list: unknown, type: string): asserts list is string[] {
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) serialization(type);
}

function checkBase64(text: string, where: string): void {
  if (text.length % 4 !== 0 || !BASE64.test(text))
    fail(`${INVALID}Invalid Base64 value for a binary attribute`, where);
}

function checkNumber(text: string, where: string): void {
  if (SMALL_INTEGER.test(text)) return;
  try {
    storableDecimal(text);
  } catch (error) {
    fail((error as Error).message, where);
  }
}

/**
 * Throws DynamoDB's ValidationException if `value` is not a valid attribute
 * value. `where` is '' for an item's or key's attribute, or the placeholder
 * (`:v`) of an ExpressionAttributeValues entry, whose errors DynamoDB words
 * as "ExpressionAttributeValues contains invalid value: ... for key :v".
 * Empty strings and binaries pass: only key attributes refuse them.
 */
export function validateValue(value: unknown, where: string): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(EMPTY, where);
  let type: string | undefined;
  for (const key in value) {
    if (!TYPES.has(key) || (value as Record<string, unknown>)[key] === undefined) continue;
    if (type !== undefined) fail(SEVERAL, where);
    type = key;
  }
  if (type === undefined) fail(EMPTY, where);
  const v = value as AttributeValue;
  switch (type) {
    case 'S':
      if (typeof v.S !== 'string') serialization(type);
      return;
    case 'N':
      if (typeof v.N !== 'string') serialization(type);
      checkNumber(v.N, where);
      return;
    case 'B':
      if (typeof v.B !== 'string') serialization(type);
      checkBase64(v.B, where);
      return;
    case 'BOOL':
      if (typeof v.BOOL !== 'boolean') serialization(type);
      return;
    case 'NULL':
      if (v.NULL !== true) fail(`${INVALID}Null attribute value types must have the value of true`, where);
      return;
    case 'SS': {
      checkStrings(v.SS, type);
      if (v.SS.length === 0) fail(`${INVALID}An string set  may not be empty`, where);
      if (new Set(v.SS).size !== v.SS.length) {
        fail(`${INVALID}Input collection [${v.SS.join(', ')}] contains duplicates.`, where);
      }
      return;
    }
    case 'NS': {
      checkStrings(v.NS, type);
      if (v.NS.length === 0) fail(`${INVALID}An number set  may not be empty`, where);
      for (const n of v.NS) checkNumber(n, where);
      if (new Set(v.NS.map(normalizeNumber)).size !== v.NS.length)
        fail('Input collection contains duplicates', where);
      return;
    }
    case 'BS': {
      checkStrings(v.BS, type);
      if (v.BS.length === 0) fail(`${INVALID}Binary sets should not be empty`, where);
      for (const b of v.BS) checkBase64(b, where);
      if (new Set(v.BS.map((b) => bytesOf(b).toString('hex'))).size !== v.BS.length) {
        fail(`${INVALID}Input collection [${v.BS.join(', ')}]of type BS contains duplicates.`, where);
      }
      return;
    }
    case 'L':
      if (!Array.isArray(v.L)) serialization(type);
      for (const element of v.L) validateValue(element, where);
      return;
    default: {
      const map = v.M;
      if (map === null || typeof map !== 'object' || Array.isArray(map)) serialization('M');
      for (const key in map) validateValue(map[key], where);
    }
  }
}

// ---------------------------------------------------------------------------
// Size (the same results as local/capacity.ts, which the cost model was built on).

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '');
  return Math.ceil(digits.replace(/0+$/, '').length / 2) + 1;
}

/** The size DynamoDB counts for one value, in bytes. */
export function valueSize(value: AttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8(String(v));
    case 'N':
      return numberSize(String(v));
    case 'B':
      return Buffer.from(String(v), 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (v as string[]).reduce((n, s) => n + utf8(s), 0);
    case 'NS':
      return (v as string[]).reduce((n, s) => n + numberSize(s), 0);
    case 'BS':
      return (v as string[]).reduce((n, s) => n + Buffer.from(s, 'base64').length, 0);
    case 'L':
      return 3 + (v as AttributeValue[]).reduce((n, e) => n + 1 + valueSize(e), 0);
    case 'M':
      return 3 + Object.entries(v as Item).reduce((n, [k, e]) => n + 1 + utf8(k) + valueSize(e), 0);
    default:
      return 0;
  }
}

/** The size DynamoDB counts for an item (names plus values), in bytes. */
export function itemSize(item: Item | undefined): number {
  if (!item) return 0;
  const known = sizes.get(item);
  if (known !== undefined) return known;
  let size = 0;
  for (const name in item) size += utf8(name) + valueSize(item[name]!);
  sizes.set(item, size);
  return size;
}

/**
 * Sizes already computed, by item. An item is never changed once made (the
 * engine stores what it parsed or what an update built anew), and one stored
 * item is sized again and again: for capacity, for each stream record, for
 * every page of a Query that reads it.
 */
const sizes = new WeakMap<Item, number>();
