/**
 * Binds parsed expressions to one request's ExpressionAttributeNames and
 * ExpressionAttributeValues and compiles them to closures over an item
 * (Developer Guide, "Condition and filter expressions, operators, and
 * functions"). Binding makes the checks that depend on the values (operand
 * types, BETWEEN bounds); evaluating allocates nothing but size() results.
 */
import { DynamoDbError, validation } from './errors';
import type { ConditionNode, ExpressionKind, FunctionNode, OperandNode, PathNode } from './expression-parser';
import {
  type AttributeValue,
  bytesOf,
  compareBinary,
  compareNumbers,
  compareUtf8,
  type Item,
  own,
  typeOf,
  valuesEqual,
} from './values';

/** A resolved document path: attribute names and list indexes. */
export type Path = readonly (string | number)[];

export type Getter = (item: Item) => AttributeValue | undefined;
export type Predicate = (item: Item) => boolean;

/** An operand compiled: how to read it, and its type when known before any item is seen. */
export interface Operand {
  readonly get: Getter;
  readonly type: string | undefined;
  readonly path?: Path;
}

/** One expression of one request: its kind (for error wording) and the request's names and values. */
export class Binding {
  constructor(
    readonly kind: ExpressionKind,
    private readonly names: Record<string, string>,
    private readonly values: Record<string, AttributeValue>,
  ) {}

  error(message: string): DynamoDbError {
    return validation(`Invalid ${this.kind}: ${message}`);
  }

  path(node: PathNode): Path {
    return node.parts.map((part) =>
      typeof part === 'string' && part.charCodeAt(0) === 35 ? own(this.names, part)! : part,
    );
  }

  value(name: string): AttributeValue {
    return own(this.values, name)!;
  }
}

/** The value at `path` in `item`, if there is one. */
export function getPath(item: Item, path: Path): AttributeValue | undefined {
  let value = own(item, path[0] as string);
  for (let i = 1; i < path.length && value !== undefined; i++) {
    const part = path[i]!;
    if (typeof part === 'number') value = value.L?.[part];
    else value = value.M !== undefined ? own(value.M, part) : undefined;
  }
  return value;
}

/** A path as DynamoDB prints it in messages: `[a, b, [0]]`. */
export const pathString = (path: Path): string =>
  `[${path.map((part) => (typeof part === 'number' ? `[${part}]` : part)).join(', ')}]`;

/** Throws DynamoDB's error if two paths overlap (one is a prefix of the other) or conflict. */
export function checkOverlaps(binding: Binding, paths: readonly Path[]): void {
  for (let j = 1; j < paths.length; j++) {
    for (let i = 0; i < j; i++) {
      const a = paths[i]!;
      const b = paths[j]!;
      let k = 0;
      while (k < a.length && k < b.length && a[k] === b[k]) k++;
      const pair = `path one: ${pathString(a)}, path two: ${pathString(b)}`;
      if (k === a.length || k === b.length) {
        throw binding.error(
          `Two document paths overlap with each other; must remove or rewrite one of these paths; ${pair}`,
        );
      }
      if (typeof a[k] !== typeof b[k]) {
        throw binding.error(
          `Two document paths conflict with each other; must remove or rewrite one of these paths; ${pair}`,
        );
      }
    }
  }
}

const samePath = (a: Path | undefined, b: Path | undefined) =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((part, i) => part === b[i]);

export const ATTRIBUTE_TYPES = ['S', 'N', 'B', 'BOOL', 'NULL', 'SS', 'NS', 'BS', 'L', 'M'];

/** size(): bytes of an S (UTF-8) or B, members of a set, list or map; nothing for other types. */
export function sizeOf(value: AttributeValue): number | undefined {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.B !== undefined) return bytesOf(value.B).length;
  const members = value.SS ?? value.NS ?? value.BS ?? value.L;
  if (members !== undefined) return members.length;
  if (value.M !== undefined) return Object.keys(value.M).length;
  return undefined;
}

/** Orders two values of the same scalar type (S, N or B); NaN when they cannot be ordered. */
export function compareScalars(a: AttributeValue, b: AttributeValue): number {
  if (a.N !== undefined) return b.N !== undefined ? compareNumbers(a.N, b.N) : Number.NaN;
  if (a.S !== undefined) return b.S !== undefined ? compareUtf8(a.S, b.S) : Number.NaN;
  if (a.B !== undefined) return b.B !== undefined ? compareBinary(a.B, b.B) : Number.NaN;
  return Number.NaN;
}

export function beginsWith(value: AttributeValue, prefix: AttributeValue): boolean {
  if (value.S !== undefined && prefix.S !== undefined) return value.S.startsWith(prefix.S);
  if (value.B !== undefined && prefix.B !== undefined) {
    const bytes = bytesOf(value.B);
    const start = bytesOf(prefix.B);
    return start.length <= bytes.length && bytes.subarray(0, start.length).equals(start);
  }
  return false;
}

function contains(value: AttributeValue, operand: AttributeValue): boolean {
  if (value.S !== undefined) return operand.S !== undefined && value.S.includes(operand.S);
  if (value.B !== undefined) return operand.B !== undefined && bytesOf(value.B).includes(bytesOf(operand.B));
  if (value.SS !== undefined) return operand.S !== undefined && value.SS.includes(operand.S);
  if (value.NS !== undefined) {
    const n = operand.N;
    return n !== undefined && value.NS.some((member) => compareNumbers(member, n) === 0);
  }
  if (value.BS !== undefined) {
    const b = operand.B;
    return b !== undefined && value.BS.some((member) => compareBinary(member, b) === 0);
  }
  if (value.L !== undefined) return value.L.some((element) => valuesEqual(element, operand));
  return false;
}

// --- operands -------------------------------------------------------------------

function incorrectType(binding: Binding, fn: string, type: string): DynamoDbError {
  return binding.error(
    `Incorrect operand type for operator or function; operator or function: ${fn}, operand type: ${type}`,
  );
}

/** Compiles an operand of a condition: a path, a value, or size(). */
export function conditionOperand(binding: Binding, node: OperandNode): Operand {
  switch (node.kind) {
    case 'path': {
      const path = binding.path(node);
      const first = path[0] as string;
      const get: Getter = path.length === 1 ? (item) => own(item, first) : (item) => getPath(item, path);
      return { get, type: undefined, path };
    }
    case 'value': {
      const value = binding.value(node.name);
      return { get: () => value, type: typeOf(value) };
    }
    case 'function': {
      // The parser allows only size() here.
      const arg = conditionOperand(binding, node.args[0]!);
      if (arg.type === 'N' || arg.type === 'BOOL' || arg.type === 'NULL')
        throw incorrectType(binding, 'size', arg.type);
      return {
        get: (item) => {
          const value = arg.get(item);
          const size = value === undefined ? undefined : sizeOf(value);
          return size === undefined ? undefined : { N: String(size) };
        },
        type: 'N',
      };
    }
    default:
      throw binding.error('Syntax error; arithmetic is only allowed in an update expression');
  }
}

function checkDistinct(binding: Binding, op: string, a: Operand, b: Operand): void {
  if (samePath(a.path, b.path)) {
    throw binding.error(
      `The first operand must be distinct from the remaining operands for this operator or function; operator: ${op}, first operand: ${pathString(a.path!)}`,
    );
  }
}

const ORDERABLE = new Set(['S', 'N', 'B']);

function checkOrderable(binding: Binding, op: string, operands: Operand[]): void {
  for (const operand of operands) {
    if (operand.type !== undefined && !ORDERABLE.has(operand.type))
      throw incorrectType(binding, op, operand.type);
  }
}

const literal = (value: AttributeValue) => `AttributeValue: {${typeOf(value)}:${Object.values(value)[0]}}`;

function checkBounds(binding: Binding, low: Operand, high: Operand): void {
  if (low.type === undefined || high.type === undefined || low.path || high.path) return;
  const a = low.get({})!;
  const b = high.get({})!;
  const bounds = `lower bound operand: ${literal(a)}, upper bound operand: ${literal(b)}`;
  if (low.type !== high.type) {
    throw binding.error(`The BETWEEN operator requires same data type for lower and upper bounds; ${bounds}`);
  }
  if (compareScalars(a, b) > 0) {
    throw binding.error(
      `The BETWEEN operator requires upper bound to be greater than or equal to lower bound; ${bounds}`,
    );
  }
}

// --- conditions -----------------------------------------------------------------

/** Compiles a condition (or filter) expression to a predicate over an item. */
export function compileCondition(binding: Binding, node: ConditionNode): Predicate {
  switch (node.kind) {
    case 'and': {
      const left = compileCondition(binding, node.left);
      const right = compileCondition(binding, node.right);
      return (item) => left(item) && right(item);
    }
    case 'or': {
      const left = compileCondition(binding, node.left);
      const right = compileCondition(binding, node.right);
      return (item) => left(item) || right(item);
    }
    case 'not': {
      const operand = compileCondition(binding, node.operand);
      return (item) => !operand(item);
    }
    case 'compare':
      return compileComparison(binding, node.op, node.left, node.right);
    case 'between': {
      const subject = conditionOperand(binding, node.subject);
      const low = conditionOperand(binding, node.low);
      const high = conditionOperand(binding, node.high);
      checkOrderable(binding, 'BETWEEN', [subject, low, high]);
      checkBounds(binding, low, high);
      return (item) => {
        const v = subject.get(item);
        const a = low.get(item);
        const b = high.get(item);
        return (
          v !== undefined &&
          a !== undefined &&
          b !== undefined &&
          compareScalars(v, a) >= 0 &&
          compareScalars(v, b) <= 0
        );
      };
    }
    case 'in': {
      const subject = conditionOperand(binding, node.subject);
      const list = node.list.map((operand) => conditionOperand(binding, operand));
      return (item) => {
        const v = subject.get(item);
        if (v === undefined) return false;
        for (const operand of list) {
          const candidate = operand.get(item);
          if (candidate !== undefined && valuesEqual(v, candidate)) return true;
        }
        return false;
      };
    }
    default:
      return compileFunction(binding, node.call);
  }
}

function compileComparison(
  binding: Binding,
  op: string,
  leftNode: OperandNode,
  rightNode: OperandNode,
): Predicate {
  const left = conditionOperand(binding, leftNode);
  const right = conditionOperand(binding, rightNode);
  checkDistinct(binding, op, left, right);
  if (op === '=' || op === '<>') {
    const equal = op === '=';
    return (item) => {
      const a = left.get(item);
      const b = right.get(item);
      // A missing operand equals nothing: `=` is false and `<>` true.
      if (a === undefined || b === undefined) return !equal;
      return valuesEqual(a, b) === equal;
    };
  }
  checkOrderable(binding, op, [left, right]);
  const test: (order: number) => boolean =
    op === '<' ? (o) => o < 0 : op === '<=' ? (o) => o <= 0 : op === '>' ? (o) => o > 0 : (o) => o >= 0;
  return (item) => {
    const a = left.get(item);
    const b = right.get(item);
    // Values of different types do not compare: the comparison is false (NaN fails every test).
    return a !== undefined && b !== undefined && test(compareScalars(a, b));
  };
}

function requirePath(binding: Binding, name: string, operand: Operand): Path {
  if (!operand.path)
    throw binding.error(`Operator or function requires a document path; operator or function: ${name}`);
  return operand.path;
}

function compileFunction(binding: Binding, call: FunctionNode): Predicate {
  const args = call.args.map((arg) => conditionOperand(binding, arg));
  const [first, second] = args as [Operand, Operand];
  switch (call.name) {
    case 'attribute_exists':
      requirePath(binding, call.name, first);
      return (item) => first.get(item) !== undefined;
    case 'attribute_not_exists':
      requirePath(binding, call.name, first);
      return (item) => first.get(item) === undefined;
    case 'attribute_type': {
      if (second.type !== 'S')
        throw incorrectType(binding, call.name, second.type ?? '{NS,SS,L,BS,N,M,B,BOOL,NULL,S}');
      const type = second.get({})!.S!;
      if (!ATTRIBUTE_TYPES.includes(type)) {
        throw binding.error(
          `Invalid attribute type name found; type: ${type}, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}`,
        );
      }
      return (item) => {
        const value = first.get(item);
        return value !== undefined && typeOf(value) === type;
      };
    }
    case 'begins_with':
      checkDistinct(binding, call.name, first, second);
      for (const arg of args) {
        if (arg.type !== undefined && arg.type !== 'S' && arg.type !== 'B')
          throw incorrectType(binding, call.name, arg.type);
      }
      return (item) => {
        const value = first.get(item);
        const prefix = second.get(item);
        return value !== undefined && prefix !== undefined && beginsWith(value, prefix);
      };
    default:
      // contains: the only other function the parser accepts as a condition.
      checkDistinct(binding, call.name, first, second);
      return (item) => {
        const value = first.get(item);
        const operand = second.get(item);
        return value !== undefined && operand !== undefined && contains(value, operand);
      };
  }
}
