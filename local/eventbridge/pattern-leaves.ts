/**
 * The machinery of event-pattern leaf tests (pattern.ts): case folding for
 * `equals-ignore-case`, globs for `wildcard`, IP literals and ranges for
 * `cidr` and IP value lists, each as event-ruler reads them.
 */

/** Thrown by validatePattern and matchesPattern for a pattern event-ruler would reject. */
export class EventPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventPatternError';
  }
}

export type Leaf = string | number | boolean | null;
export type LeafTest = (value: Leaf) => boolean;

/** Throws an EventPatternError naming the pattern path. */
export function fail(path: readonly string[], message: string): never {
  const where = path.length > 0 ? ` at "${path.join('.')}"` : '';
  throw new EventPatternError(`Invalid event pattern${where}: ${message}`);
}

// ---------------------------------------------------------------------------
// equals-ignore-case: each pattern character matches its lower- or upper-case form

export type Folded = readonly (readonly string[])[];

/** Per UTF-16 unit, like event-ruler: characters outside the BMP only match themselves. */
export function caseFold(pattern: string): Folded {
  return pattern.split('').map((unit) => [...new Set([unit.toLowerCase(), unit.toUpperCase()])]);
}

/** End offsets in `value` reachable by matching all of `folded` from `start`. */
function foldedEnds(value: string, start: number, folded: Folded): Set<number> {
  let positions = new Set([start]);
  for (const forms of folded) {
    const next = new Set<number>();
    for (const position of positions) {
      for (const form of forms) if (value.startsWith(form, position)) next.add(position + form.length);
    }
    if (next.size === 0) return next;
    positions = next;
  }
  return positions;
}

export function equalsIgnoringCase(value: string, folded: Folded): boolean {
  return foldedEnds(value, 0, folded).has(value.length);
}

export function startsWithIgnoringCase(value: string, folded: Folded): boolean {
  return foldedEnds(value, 0, folded).size > 0;
}

export function endsWithIgnoringCase(value: string, folded: Folded): boolean {
  for (let start = value.length; start >= 0; start--) {
    if (foldedEnds(value, start, folded).has(value.length)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// wildcard: `*` matches any run of characters, `\*` and `\\` are a literal star and backslash

/** Literal pieces between the stars: a glob "a*b*c" is ["a", "b", "c"]. */
export type Glob = readonly string[];

export function parseWildcard(path: readonly string[], pattern: string): Glob {
  const pieces: string[] = [];
  let piece = '';
  let previousWasStar = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '*') {
      if (previousWasStar) fail(path, `wildcard "${pattern}": consecutive wildcard characters at ${i}`);
      pieces.push(piece);
      piece = '';
      previousWasStar = true;
      continue;
    }
    previousWasStar = false;
    if (char === '\\') {
      const next = pattern[i + 1];
      if (next !== '*' && next !== '\\') fail(path, `wildcard "${pattern}": invalid escape at ${i}`);
      piece += next;
      i++;
    } else {
      piece += char;
    }
  }
  pieces.push(piece);
  return pieces;
}

export function matchesWildcard(value: string, glob: Glob): boolean {
  const first = glob[0] ?? '';
  if (glob.length === 1) return value === first;
  const last = glob[glob.length - 1] ?? '';
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  // Leftmost placement of each middle piece is optimal when every gap is a star.
  let position = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < glob.length - 1; i++) {
    const piece = glob[i] ?? '';
    const found = value.indexOf(piece, position);
    if (found < 0 || found + piece.length > end) return false;
    position = found + piece.length;
  }
  return true;
}

// ---------------------------------------------------------------------------
// IP addresses, parsed the way Java's InetAddress parses literals (as event-ruler does)

const IPV4_LITERAL = /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/;
const IPV6_LITERAL = /^[0-9a-fA-F:]*:[0-9a-fA-F:]*$/;

/** An address range as upper-case hex digits of equal length (8 for IPv4, 32 for IPv6). */
export interface IpRange {
  readonly low: string;
  readonly high: string;
}

/** The address as hex digits (8, or 32 for IPv6 other than IPv4-mapped), or undefined if not an IP literal. */
export function ipHex(text: string): string | undefined {
  return parseIp(text)?.map(hexByte).join('');
}

function hexByte(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, '0');
}

function parseIp(text: string): number[] | undefined {
  if (IPV4_LITERAL.test(text)) return parseIpv4(text);
  if (IPV6_LITERAL.test(text)) return parseIpv6(text);
  return undefined;
}

function parseIpv4(text: string): number[] | undefined {
  if (text.length > 15) return undefined;
  const bytes = text.split('.').map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

function parseIpv6(text: string): number[] | undefined {
  if (text.length < 2) return undefined;
  const bytes: number[] = [];
  let i = 0;
  if (text[0] === ':') {
    if (text[1] !== ':') return undefined;
    i = 1;
  }
  let gap = -1;
  let sawDigit = false;
  let group = 0;
  while (i < text.length) {
    const char = text[i++] ?? '';
    if (char !== ':') {
      group = group * 16 + Number.parseInt(char, 16);
      if (group > 0xffff) return undefined;
      sawDigit = true;
      continue;
    }
    if (!sawDigit) {
      if (gap !== -1) return undefined;
      gap = bytes.length;
      continue;
    }
    if (i === text.length || bytes.length + 2 > 16) return undefined;
    bytes.push(group >> 8, group & 0xff);
    sawDigit = false;
    group = 0;
  }
  if (sawDigit) {
    if (bytes.length + 2 > 16) return undefined;
    bytes.push(group >> 8, group & 0xff);
  }
  if (gap !== -1) {
    if (bytes.length === 16) return undefined;
    bytes.splice(gap, 0, ...new Array<number>(16 - bytes.length).fill(0));
  }
  if (bytes.length !== 16) return undefined;
  const mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

export function parseCidr(path: readonly string[], cidr: string): IpRange {
  const parts = cidr.split('/');
  const [address, maskText] = parts;
  if (parts.length !== 2 || address === undefined || maskText === undefined) {
    fail(path, `cidr "${cidr}": expected address/mask`);
  }
  if (!/^[+-]?[0-9]+$/.test(maskText)) fail(path, `cidr "${cidr}": the mask must be an integer`);
  const mask = Number(maskText);
  const bytes = parseIp(address);
  if (!bytes) fail(path, `cidr "${cidr}": "${address}" is not an IP address`);
  const maxMask = bytes.length * 8 - 1;
  if (mask < 0 || mask > maxMask) fail(path, `cidr "${cidr}": the mask must be between 0 and ${maxMask}`);
  let low = '';
  let high = '';
  bytes.forEach((byte, index) => {
    const hostMask = 0xff >> Math.min(8, Math.max(0, mask - index * 8));
    low += hexByte(byte & ~hostMask & 0xff);
    high += hexByte(byte | hostMask);
  });
  return { low, high };
}

export function ipEquals(hex: string): LeafTest {
  const range = { low: hex, high: hex };
  return (leaf) => typeof leaf === 'string' && inRange(ipHex(leaf), range);
}

/**
 * Whether an address is in a range, the way event-ruler's automaton decides it: digit by
 * digit, accepting as soon as the address is strictly inside the range. An address of the
 * other family is therefore judged by its leading digits (an IPv6 address starting
 * `a00:1:` is "in" 10.0.0.0/8), as event-ruler does.
 */
export function inRange(address: string | undefined, range: IpRange): boolean {
  if (address === undefined) return false;
  const { low, high } = range;
  let i = 0;
  while (i < low.length && low[i] === high[i]) {
    if (address[i] !== low[i]) return false;
    i++;
  }
  if (i === low.length) return true;
  const digit = address[i];
  if (digit === undefined) return false;
  if (digit > (low[i] ?? '') && digit < (high[i] ?? '')) return true;
  const bound = digit === low[i] ? low : digit === high[i] ? high : undefined;
  if (bound === undefined) return false;
  for (let j = i + 1; j < bound.length; j++) {
    const d = address[j];
    const b = bound[j] ?? '';
    if (d === undefined) return false;
    if (d !== b) return bound === low ? d > b : d < b;
  }
  return true;
}
