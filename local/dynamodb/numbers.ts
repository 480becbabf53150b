/**
 * DynamoDB's numbers, exact: parsed, checked against its range (38
 * significant digits), normalized, compared, added and subtracted in
 * BigInt, never as JS floats. values.ts re-exports what the rest use.
 */
import { DynamoDbError, validation } from './errors';

// Numbers: a number is sign × digits × 10^scale, digits without leading or
// trailing zeros (zero has empty digits), which makes comparison a matter of
// exponents and digit strings and keeps arithmetic exact in BigInt.

interface Decimal {
  negative: boolean;
  digits: string;
  scale: number;
}

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
// Small integers need none of the general machinery (the common case: counters, prices in cents).
export const SMALL_INTEGER = /^-?(?:0|[1-9]\d{0,14})$/;
const MAX_DIGITS = 38;
const MAX_EXPONENT = 125;
const MIN_EXPONENT = -130;

const OVERFLOW = 'Number overflow. Attempting to store a number with magnitude larger than supported range';
const UNDERFLOW =
  'Number underflow. Attempting to store a number with magnitude smaller than supported range';
const TOO_MANY_DIGITS = 'Attempting to store more than 38 significant digits in a Number';

function notANumber(text: string): DynamoDbError {
  return validation(
    text === ''
      ? 'The parameter cannot be converted to a numeric value'
      : `The parameter cannot be converted to a numeric value: ${text}`,
  );
}

function parseDecimal(text: string): Decimal {
  const m = NUMBER.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw notANumber(text);
  const fraction = m[3] ?? '';
  let digits = m[2]! + fraction;
  let scale = (m[4] ? Number(m[4]) : 0) - fraction.length;
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === 48) start++;
  let end = digits.length;
  while (end > start && digits.charCodeAt(end - 1) === 48) end--;
  scale += digits.length - end;
  digits = digits.slice(start, end);
  if (digits === '') return { negative: false, digits, scale: 0 };
  return { negative: m[1] === '-', digits, scale };
}

/** Throws DynamoDB's error if the number cannot be stored (too many digits, out of range). */
function checkStorable(d: Decimal): void {
  if (d.digits === '') return;
  if (d.digits.length > MAX_DIGITS) throw validation(TOO_MANY_DIGITS);
  const exponent = d.scale + d.digits.length - 1;
  if (exponent > MAX_EXPONENT) throw validation(OVERFLOW);
  if (exponent < MIN_EXPONENT) throw validation(UNDERFLOW);
}

function formatDecimal(d: Decimal): string {
  if (d.digits === '') return '0';
  const sign = d.negative ? '-' : '';
  if (d.scale >= 0) return sign + d.digits + '0'.repeat(d.scale);
  const point = d.digits.length + d.scale;
  if (point > 0) return `${sign}${d.digits.slice(0, point)}.${d.digits.slice(point)}`;
  return `${sign}0.${'0'.repeat(-point)}${d.digits}`;
}

/** Parses and checks a number as DynamoDB stores it; throws DynamoDB's ValidationException otherwise. */
export function storableDecimal(text: string): Decimal {
  const d = parseDecimal(text);
  checkStorable(d);
  return d;
}

/** The text DynamoDB returns for a number: no exponent, no leading or trailing zeros, no `+`, `-0` as `0`. */
export function normalizeNumber(text: string): string {
  if (SMALL_INTEGER.test(text)) return text === '-0' ? '0' : text;
  return formatDecimal(storableDecimal(text));
}

/** Compares two numbers numerically (-1, 0 or 1). */
export function compareNumbers(a: string, b: string): number {
  if (SMALL_INTEGER.test(a) && SMALL_INTEGER.test(b)) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return compareDecimals(parseDecimal(a), parseDecimal(b));
}

function compareDecimals(a: Decimal, b: Decimal): number {
  const signA = a.digits === '' ? 0 : a.negative ? -1 : 1;
  const signB = b.digits === '' ? 0 : b.negative ? -1 : 1;
  if (signA !== signB) return signA < signB ? -1 : 1;
  if (signA === 0) return 0;
  const exponentA = a.scale + a.digits.length;
  const exponentB = b.scale + b.digits.length;
  let magnitude: number;
  if (exponentA !== exponentB) magnitude = exponentA < exponentB ? -1 : 1;
  // Same exponent: the digit strings (no trailing zeros) compare as decimal fractions.
  else magnitude = a.digits < b.digits ? -1 : a.digits > b.digits ? 1 : 0;
  return signA * magnitude;
}

function toBigInt(d: Decimal, scale: number): bigint {
  if (d.digits === '') return 0n;
  const m = BigInt(d.digits) * 10n ** BigInt(d.scale - scale);
  return d.negative ? -m : m;
}

function fromBigInt(value: bigint, scale: number): Decimal {
  const negative = value < 0n;
  return parseDecimal(`${negative ? '-' : ''}${(negative ? -value : value).toString()}e${scale}`);
}

function combine(a: string, b: string, negateB: boolean): string {
  if (SMALL_INTEGER.test(a) && SMALL_INTEGER.test(b)) {
    // Both below 2^53 / 2: the sum is exact in a double and far within 38 digits.
    const sum = negateB ? Number(a) - Number(b) : Number(a) + Number(b);
    return sum === 0 ? '0' : String(sum);
  }
  const x = storableDecimal(a);
  const y = storableDecimal(b);
  const scale = Math.min(x.digits === '' ? 0 : x.scale, y.digits === '' ? 0 : y.scale);
  const yValue = toBigInt(y, scale);
  const result = fromBigInt(toBigInt(x, scale) + (negateB ? -yValue : yValue), scale);
  if (result.digits === '') return '0';
  // Range first: a result too large is an overflow even when it also has too many digits.
  const exponent = result.scale + result.digits.length - 1;
  if (exponent > MAX_EXPONENT) throw validation(OVERFLOW);
  if (exponent < MIN_EXPONENT) throw validation(UNDERFLOW);
  if (result.digits.length > MAX_DIGITS) throw validation(TOO_MANY_DIGITS);
  return formatDecimal(result);
}

/** a + b, exactly, in DynamoDB's canonical text. */
export function addNumbers(a: string, b: string): string {
  return combine(a, b, false);
}

/** a − b, exactly, in DynamoDB's canonical text. */
export function subtractNumbers(a: string, b: string): string {
  return combine(a, b, true);
}
