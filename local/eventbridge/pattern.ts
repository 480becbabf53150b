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
 *
 * The leaf tests' case folding, globs and IP parsing are pattern-leaves.ts;
 * matching an event against a compiled pattern is pattern-match.ts.
 */

import {
  caseFold,
  EventPatternError,
  endsWithIgnoringCase,
  equalsIgnoringCase,
  fail,
  inRange,
  ipEquals,
  ipHex,
  type LeafTest,
  matchesWildcard,
  parseCidr,
  parseWildcard,
  startsWithIgnoringCase,
} from './pattern-leaves';
import {
  type Branch,
  type FieldRule,
  flattenEvent,
  isArray,
  isPlainObject,
  matchesBranch,
} from './pattern-match';

export type EventPattern = Record<string, unknown>;

export { EventPatternError } from './pattern-leaves';

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
