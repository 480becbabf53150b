/**
 * EventBridge event-pattern matching for the local cloud.
 *
 * The semantics are those of AWS's own matcher, the Java library event-ruler
 * (software.amazon.event.ruler, the version pinned in ./ruler/pom.xml), which
 * local/test/integration/event-pattern-conformance.test.ts checks this module against.
 * Where event-ruler and the EventBridge documentation disagree, this follows
 * event-ruler. In particular:
 *
 * - Patterns and events are compared as flattened leaves: `{"a":{"b":1}}` is the
 *   field `a.b`, and so is `{"a.b":1}` (a dotted key is not escaped).
 * - Arrays in the event are "crushed": a field matches if any element matches, but
 *   the fields of one match must not come from different elements of the same array
 *   (`{"e":{"x":[1],"y":[2]}}` does not match `{"e":[{"x":1},{"y":2}]}`).
 * - `{"exists": false}` holds when no leaf at all has that path (an object or an
 *   empty array there counts as absent, `null` counts as present).
 * - A string that is an IP address literal in a value list matches any spelling of
 *   the same address (`"10.0.0.1"` matches `"10.0.0.01"`); `cidr` masks go up to /31
 *   (IPv4) and /127 (IPv6).
 * - `equals-ignore-case` matches, for each character of the pattern, its lower- or
 *   upper-case form (Java's String.toLowerCase/toUpperCase), so `"straße"` matches
 *   `"STRASSE"`.
 * - `$or` is an OR only when it is an array of at least two objects that use no
 *   match keyword as a field name; otherwise `$or` is an ordinary field name.
 * - A path given twice (`{"a":{"b":[1]},"a.b":[2]}`) keeps the last one.
 *
 * Known differences, outside what JSON parsed by JavaScript can express or what a
 * sane pattern would use: numbers are compared as JavaScript numbers (so integers
 * beyond 2^53 that differ only past double precision compare equal, where event-ruler
 * compares their text), and a number is never in a `cidr` range (event-ruler lets some
 * numbers match very wide ones such as 0.0.0.0/0).
 */

export type EventPattern = Record<string, unknown>;

/** Thrown by validatePattern and matchesPattern for a pattern event-ruler would reject. */
export class EventPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventPatternError';
  }
}

type Leaf = string | number | boolean | null;
type LeafTest = (value: Leaf) => boolean;

/** What one pattern path demands: a leaf passing any test, or (if `absent`) no leaf at all. */
interface FieldRule {
  readonly tests: readonly LeafTest[];
  readonly absent: boolean;
}

/** One alternative of a pattern (patterns with `$or` have several): all its fields must match. */
type Branch = Map<string, FieldRule>;

/** A leaf of the event, with the arrays it sits in as [arrayId, index, arrayId, index, ...]. */
interface EventField {
  readonly value: Leaf;
  readonly arrays: readonly number[];
}

/** Names that make an `$or` array an ordinary field when used as field names inside it. */
const RESERVED_IN_OR = new Set([
  'exactly',
  'equals-ignore-case',
  'prefix',
  'suffix',
  'anything-but',
  'exists',
  'wildcard',
  'numeric',
  'cidr',
  '=',
  '<',
  '<=',
  '>',
  '>=',
  'regex',
  'not-wildcard',
  'not-equals-ignore-case',
  'date-after',
  'date-on-or-after',
  'date-before',
  'date-on-or-before',
  'in-date-range',
  'ip-address-in-range',
  'ip-address-not-in-range',
]);

const compiled = new WeakMap<object, readonly Branch[]>();

/** Throws an EventPatternError, naming the offending path, if `pattern` is not a valid event pattern. */
export function validatePattern(pattern: unknown): void {
  compile(pattern);
}

/** Whether `event` (a full EventBridge envelope, or any JSON object) matches `pattern`. */
export function matchesPattern(pattern: EventPattern, event: Record<string, unknown>): boolean {
  const branches = compile(pattern);
  const fields = flattenEvent(event);
  return branches.some((branch) => matchesBranch(branch, fields));
}

// ---------------------------------------------------------------------------
// Compiling a pattern

function compile(pattern: unknown): readonly Branch[] {
  if (!isPlainObject(pattern)) throw new EventPatternError('Event pattern must be a JSON object');
  const cached = compiled.get(pattern);
  if (cached) return cached;
  let branches: Branch[];
  try {
    branches = compileWith(pattern, false);
  } catch (error) {
    // Like event-ruler, a pattern that fails with `$or` as an operator is retried
    // with `$or` as an ordinary field name (its pre-`$or` compiler).
    if (!(error instanceof EventPatternError)) throw error;
    try {
      branches = compileWith(pattern, true);
    } catch {
      throw error;
    }
  }
  compiled.set(pattern, branches);
  return branches;
}

interface CompileMode {
  /**
   * event-ruler's legacy compiler, which it falls back to when its current one rejects a
   * pattern: `$or` is an ordinary field name, and anything-but takes no wildcard nor
   * prefix/suffix lists.
   */
  readonly legacy: boolean;
}

function compileWith(pattern: Record<string, unknown>, legacy: boolean): Branch[] {
  const branches: Branch[] = [];
  compileObject(branches, [], pattern, { legacy }, false);
  return branches;
}

function compileObject(
  branches: Branch[],
  path: readonly string[],
  object: Record<string, unknown>,
  mode: CompileMode,
  insideOr: boolean,
): void {
  const entries = Object.entries(object);
  if (entries.length === 0) fail(path, 'empty objects are not allowed');
  for (const [key, value] of entries) {
    if (!mode.legacy && key === '$or') {
      compileOr(branches, path, value, mode);
      continue;
    }
    const at = [...path, key];
    if (insideOr && RESERVED_IN_OR.has(key))
      fail(at, `"${key}" is a reserved name and cannot be a field inside $or`);
    if (isArray(value)) {
      addField(branches, at, value, mode);
    } else if (isPlainObject(value)) {
      compileObject(branches, at, value, mode, insideOr);
    } else {
      fail(at, 'must be an object or an array of values to match');
    }
  }
}

function compileOr(branches: Branch[], path: readonly string[], value: unknown, mode: CompileMode): void {
  const at = [...path, '$or'];
  if (!isArray(value)) fail(at, '$or must be an array of at least 2 objects');
  const before = branches.map((branch) => new Map(branch));
  branches.length = 0;
  for (const alternative of value) {
    if (!isPlainObject(alternative)) fail(at, 'only objects are allowed in an $or array');
    const forked =
      before.length > 0 ? before.map((branch) => new Map(branch)) : [new Map<string, FieldRule>()];
    compileObject(forked, path, alternative, mode, true);
    branches.push(...forked);
  }
  if (value.length < 2) fail(at, '$or must be an array of at least 2 objects');
}

function addField(
  branches: Branch[],
  path: readonly string[],
  values: readonly unknown[],
  mode: CompileMode,
): void {
  if (values.length === 0) fail(path, 'empty arrays are not allowed');
  const tests: LeafTest[] = [];
  let absent = false;
  for (const value of values) {
    if (isPlainObject(value)) {
      const test = compileMatchExpression(path, value, mode);
      if (test === 'absent') absent = true;
      else tests.push(test);
    } else if (typeof value === 'string') {
      const ip = ipHex(value);
      tests.push(ip !== undefined ? ipEquals(ip) : (leaf) => leaf === value);
    } else if (typeof value === 'number') {
      checkNumber(path, value);
      tests.push((leaf) => leaf === value);
    } else if (typeof value === 'boolean' || value === null) {
      tests.push((leaf) => leaf === value);
    } else {
      fail(path, 'match values must be strings, numbers, true, false, null or match objects');
    }
  }
  const rule: FieldRule = { tests, absent };
  if (branches.length === 0) branches.push(new Map());
  const name = path.join('.');
  for (const branch of branches) branch.set(name, rule);
}

function compileMatchExpression(
  path: readonly string[],
  expression: Record<string, unknown>,
  mode: CompileMode,
): LeafTest | 'absent' {
  const keys = Object.keys(expression);
  const [op] = keys;
  if (op === undefined)
    fail(path, 'empty match object: expected one of prefix, suffix, anything-but, numeric, ...');
  if (keys.length > 1) fail(path, `only one key allowed in a match expression, got ${keys.join(', ')}`);
  const arg = expression[op];
  switch (op) {
    case 'exactly': {
      const value = requireString(path, op, arg);
      return (leaf) => leaf === value;
    }
    case 'prefix':
    case 'suffix': {
      if (isPlainObject(arg)) {
        const inner = Object.keys(arg);
        if (inner.length !== 1 || inner[0] !== 'equals-ignore-case') {
          fail(path, `${op} accepts a string or {"equals-ignore-case": string}`);
        }
        const folded = caseFold(requireString(path, `${op} equals-ignore-case`, arg['equals-ignore-case']));
        return op === 'prefix'
          ? (leaf) => typeof leaf === 'string' && startsWithIgnoringCase(leaf, folded)
          : (leaf) => typeof leaf === 'string' && endsWithIgnoringCase(leaf, folded);
      }
      const affix = requireString(path, op, arg);
      return op === 'prefix'
        ? (leaf) => typeof leaf === 'string' && leaf.startsWith(affix)
        : (leaf) => typeof leaf === 'string' && leaf.endsWith(affix);
    }
    case 'equals-ignore-case': {
      const folded = caseFold(requireString(path, op, arg));
      return (leaf) => typeof leaf === 'string' && equalsIgnoringCase(leaf, folded);
    }
    case 'wildcard': {
      const glob = parseWildcard(path, requireString(path, op, arg));
      return (leaf) => typeof leaf === 'string' && matchesWildcard(leaf, glob);
    }
    case 'numeric':
      return compileNumeric(path, arg);
    case 'anything-but':
      return compileAnythingBut(path, arg, mode);
    case 'exists':
      if (typeof arg !== 'boolean') fail(path, 'exists must be true or false');
      return arg ? () => true : 'absent';
    case 'cidr': {
      const range = parseCidr(path, requireString(path, op, arg));
      return (leaf) => typeof leaf === 'string' && inRange(ipHex(leaf), range);
    }
    default:
      return fail(path, `unrecognized match type "${op}"`);
  }
}

function compileNumeric(path: readonly string[], arg: unknown): LeafTest {
  if (!isArray(arg)) fail(path, 'numeric must be an array such as [">", 0, "<=", 5]');
  const [op, value, op2, value2] = arg;
  const bound = (v: unknown, after: unknown): number => {
    if (typeof v !== 'number') fail(path, `numeric: the value after "${String(after)}" must be a number`);
    checkNumber(path, v);
    return v;
  };
  let low = Number.NEGATIVE_INFINITY;
  let high = Number.POSITIVE_INFINITY;
  let lowOpen = false;
  let highOpen = false;
  switch (op) {
    case '=':
      low = high = bound(value, op);
      if (arg.length > 2) fail(path, 'numeric: "=" takes a single value');
      break;
    case '<':
    case '<=':
      high = bound(value, op);
      highOpen = op === '<';
      if (arg.length > 2) fail(path, `numeric: a range must start with ">" or ">=", not "${op}"`);
      break;
    case '>':
    case '>=':
      low = bound(value, op);
      lowOpen = op === '>';
      if (arg.length === 2) break;
      if (op2 !== '<' && op2 !== '<=') fail(path, `numeric: bad range operator ${JSON.stringify(op2)}`);
      high = bound(value2, op2);
      highOpen = op2 === '<';
      if (arg.length > 4) fail(path, 'numeric: too many terms in the range');
      if (!(low < high)) fail(path, 'numeric: the lower bound must be less than the upper bound');
      break;
    default:
      fail(path, `numeric: unrecognized operator ${JSON.stringify(op)} (use =, <, <=, >, >=)`);
  }
  return (leaf) =>
    typeof leaf === 'number' &&
    (lowOpen ? leaf > low : leaf >= low) &&
    (highOpen ? leaf < high : leaf <= high);
}

function compileAnythingBut(path: readonly string[], arg: unknown, mode: CompileMode): LeafTest {
  if (isPlainObject(arg)) {
    const keys = Object.keys(arg);
    const [op] = keys;
    if (op === undefined) fail(path, 'anything-but: empty object');
    if (keys.length > 1) fail(path, 'anything-but: only one key allowed');
    const supported = ['equals-ignore-case', 'prefix', 'suffix', ...(mode.legacy ? [] : ['wildcard'])];
    if (!supported.includes(op)) fail(path, `anything-but: unsupported pattern "${op}"`);
    const inner = arg[op];
    if (mode.legacy && isArray(inner) && (op === 'prefix' || op === 'suffix')) {
      fail(path, `anything-but ${op}: the value must be a string`);
    }
    const list = isArray(inner) ? inner : [inner];
    if (list.length === 0) fail(path, `anything-but ${op}: empty lists are not allowed`);
    const strings = list.map((item) => requireString(path, `anything-but ${op}`, item));
    if ((op === 'prefix' || op === 'suffix') && strings.includes('')) {
      fail(path, `anything-but ${op}: the empty string is not allowed`);
    }
    let excluded: (value: string) => boolean;
    if (op === 'equals-ignore-case') {
      const folded = strings.map(caseFold);
      excluded = (value) => folded.some((f) => equalsIgnoringCase(value, f));
    } else if (op === 'prefix') {
      excluded = (value) => strings.some((s) => value.startsWith(s));
    } else if (op === 'suffix') {
      excluded = (value) => strings.some((s) => value.endsWith(s));
    } else {
      const globs = strings.map((s) => parseWildcard(path, s));
      excluded = (value) => globs.some((glob) => matchesWildcard(value, glob));
    }
    return (leaf) => typeof leaf !== 'string' || !excluded(leaf);
  }
  const list = isArray(arg) ? arg : [arg];
  if (!isArray(arg) && typeof arg !== 'string' && typeof arg !== 'number') {
    fail(path, 'anything-but must be a string, a number, a list of either, or a prefix/suffix/... object');
  }
  if (list.length > 0 && list.every((item) => typeof item === 'string')) {
    const strings = new Set(list as string[]);
    return (leaf) => typeof leaf !== 'string' || !strings.has(leaf);
  }
  if (list.length > 0 && list.every((item) => typeof item === 'number')) {
    for (const n of list as number[]) checkNumber(path, n);
    const numbers = new Set(list as number[]);
    return (leaf) => typeof leaf !== 'number' || !numbers.has(leaf);
  }
  return fail(path, 'anything-but list: values must be all strings or all numbers, and not empty');
}

function requireString(path: readonly string[], what: string, value: unknown): string {
  if (typeof value !== 'string') fail(path, `${what}: the value must be a string`);
  return value;
}

function checkNumber(path: readonly string[], value: number): void {
  if (!Number.isFinite(value)) fail(path, `numbers must be finite, got ${value}`);
}

function fail(path: readonly string[], message: string): never {
  const where = path.length > 0 ? ` at "${path.join('.')}"` : '';
  throw new EventPatternError(`Invalid event pattern${where}: ${message}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

// ---------------------------------------------------------------------------
// Matching an event

function flattenEvent(event: Record<string, unknown>): Map<string, EventField[]> {
  const fields = new Map<string, EventField[]>();
  let arrayIds = 0;
  const visit = (value: unknown, path: string, arrays: readonly number[]): void => {
    if (isArray(value)) {
      const id = arrayIds++;
      value.forEach((element, index) => {
        visit(element, path, [...arrays, id, index]);
      });
    } else if (isPlainObject(value)) {
      for (const [key, child] of Object.entries(value))
        visit(child, path === '' ? key : `${path}.${key}`, arrays);
    } else if (
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      value === null
    ) {
      const list = fields.get(path);
      const field = { value, arrays };
      if (list) list.push(field);
      else fields.set(path, [field]);
    }
  };
  for (const [key, value] of Object.entries(event)) visit(value, key, []);
  return fields;
}

function matchesBranch(branch: Branch, fields: Map<string, EventField[]>): boolean {
  const required: EventField[][] = [];
  for (const [path, rule] of branch) {
    const leaves = fields.get(path) ?? [];
    if (rule.absent && leaves.length === 0) continue;
    const candidates = leaves.filter((field) => rule.tests.some((test) => test(field.value)));
    if (candidates.length === 0) return false;
    required.push(candidates);
  }
  required.sort((a, b) => a.length - b.length);
  return chooseConsistent(required, 0, []);
}

/** Picks one candidate per required path such that no two come from different elements of one array. */
function chooseConsistent(required: EventField[][], index: number, chosen: EventField[]): boolean {
  const candidates = required[index];
  if (candidates === undefined) return true;
  for (const candidate of candidates) {
    if (chosen.every((other) => consistent(candidate, other))) {
      chosen.push(candidate);
      if (chooseConsistent(required, index + 1, chosen)) return true;
      chosen.pop();
    }
  }
  return false;
}

function consistent(a: EventField, b: EventField): boolean {
  for (let i = 0; i < a.arrays.length; i += 2) {
    for (let j = 0; j < b.arrays.length; j += 2) {
      if (a.arrays[i] === b.arrays[j] && a.arrays[i + 1] !== b.arrays[j + 1]) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// equals-ignore-case: each pattern character matches its lower- or upper-case form

type Folded = readonly (readonly string[])[];

/** Per UTF-16 unit, like event-ruler: characters outside the BMP only match themselves. */
function caseFold(pattern: string): Folded {
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

function equalsIgnoringCase(value: string, folded: Folded): boolean {
  return foldedEnds(value, 0, folded).has(value.length);
}

function startsWithIgnoringCase(value: string, folded: Folded): boolean {
  return foldedEnds(value, 0, folded).size > 0;
}

function endsWithIgnoringCase(value: string, folded: Folded): boolean {
  for (let start = value.length; start >= 0; start--) {
    if (foldedEnds(value, start, folded).has(value.length)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// wildcard: `*` matches any run of characters, `\*` and `\\` are a literal star and backslash

/** Literal pieces between the stars: a glob "a*b*c" is ["a", "b", "c"]. */
type Glob = readonly string[];

function parseWildcard(path: readonly string[], pattern: string): Glob {
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

function matchesWildcard(value: string, glob: Glob): boolean {
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
interface IpRange {
  readonly low: string;
  readonly high: string;
}

/** The address as hex digits (8, or 32 for IPv6 other than IPv4-mapped), or undefined if not an IP literal. */
function ipHex(text: string): string | undefined {
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

function parseCidr(path: readonly string[], cidr: string): IpRange {
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

function ipEquals(hex: string): LeafTest {
  const range = { low: hex, high: hex };
  return (leaf) => typeof leaf === 'string' && inRange(ipHex(leaf), range);
}

/**
 * Whether an address is in a range, the way event-ruler's automaton decides it: digit by
 * digit, accepting as soon as the address is strictly inside the range. An address of the
 * other family is therefore judged by its leading digits (an IPv6 address starting
 * `a00:1:` is "in" 10.0.0.0/8), as event-ruler does.
 */
function inRange(address: string | undefined, range: IpRange): boolean {
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
