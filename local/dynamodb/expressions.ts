/**
 * DynamoDB expressions for the engine: one call compiles every expression of
 * a request (Developer Guide, "Using expressions in DynamoDB"), checking the
 * request's ExpressionAttributeNames and ExpressionAttributeValues across
 * all of them as DynamoDB does (each placeholder defined, each one used).
 *
 * Parsing is cached by text (expression-parser.ts); binding to the names and
 * values happens once per request; the compiled closures run per item.
 */
import { validation } from './errors';
import {
  Binding,
  beginsWith,
  compareScalars,
  compileCondition,
  conditionOperand,
  type Operand,
  type Predicate,
} from './expression-eval';
import {
  type ConditionNode,
  type ExpressionKind,
  type FunctionNode,
  type OperandNode,
  type Parsed,
  parseCondition,
  parseProjection,
  parseUpdate,
} from './expression-parser';
import {
  type CompiledProjection,
  type CompiledUpdate,
  compileProjection,
  compileUpdate,
} from './expression-update';
import { type AttributeValue, type Item, typeOf, validateValue, valuesEqual } from './values';

export type { Path } from './expression-eval';
export { getPath } from './expression-eval';
export type { CompiledProjection, CompiledUpdate } from './expression-update';
export { projectPaths } from './expression-update';

/** The expressions one request carries (any may be absent). */
export interface RequestExpressions {
  readonly condition?: string;
  readonly filter?: string;
  readonly update?: string;
  readonly projection?: string;
  readonly keyCondition?: string;
}

/** The key schema a key condition is checked against; `types` (attribute name to S/N/B) enables the type check. */
export interface KeySchema {
  readonly hash: string;
  readonly range?: string;
  readonly types?: Readonly<Record<string, string>>;
}

export interface SortCondition {
  readonly op: '=' | '<' | '<=' | '>' | '>=' | 'BETWEEN' | 'begins_with';
  readonly values: readonly AttributeValue[];
}

/** A Query's key condition: the partition key value and, optionally, one condition on the sort key. */
export interface KeyCondition {
  readonly partitionValue: AttributeValue;
  readonly sort?: SortCondition;
}

/** A condition or filter compiled; `names` are the top-level attributes it reads. */
export interface CompiledCondition {
  (item: Item | undefined): boolean;
  readonly names: readonly string[];
}

export interface CompiledRequest {
  readonly condition?: CompiledCondition;
  readonly filter?: CompiledCondition;
  readonly update?: CompiledUpdate;
  readonly projection?: CompiledProjection;
  readonly keyCondition?: KeyCondition;
}

const NAME_KEY = /^#[A-Za-z0-9_]+$/;
const VALUE_KEY = /^:[A-Za-z0-9_]+$/;
const EMPTY_ITEM: Item = Object.freeze({}) as Item;

function checkPlaceholders(
  what: 'ExpressionAttributeNames' | 'ExpressionAttributeValues',
  map: Record<string, unknown> | undefined,
  pattern: RegExp,
  anyExpression: boolean,
): void {
  if (map === undefined) return;
  const keys = Object.keys(map);
  if (!anyExpression) throw validation(`${what} can only be specified when using expressions`);
  if (keys.length === 0) throw validation(`${what} must not be empty`);
  for (const key of keys) {
    if (!pattern.test(key)) throw validation(`${what} contains invalid key: Syntax error; key: "${key}"`);
  }
}

/** Marks a parsed expression's placeholders used, throwing DynamoDB's error for one not defined. */
function markUsed(
  parsed: Parsed<unknown>,
  names: Record<string, string>,
  values: Record<string, AttributeValue>,
  used: { names: Set<string>; values: Set<string> },
): void {
  for (const name of parsed.names) {
    if (!Object.hasOwn(names, name)) {
      throw validation(
        `Invalid ${parsed.kind}: An expression attribute name used in the document path is not defined; attribute name: ${name}`,
      );
    }
    used.names.add(name);
  }
  for (const value of parsed.values) {
    if (!Object.hasOwn(values, value)) {
      throw validation(
        `Invalid ${parsed.kind}: An expression attribute value used in expression is not defined; attribute value: ${value}`,
      );
    }
    used.values.add(value);
  }
}

function unused(what: string, keys: string[], used: Set<string>): void {
  const left = keys.filter((key) => !used.has(key));
  if (left.length > 0)
    throw validation(`Value provided in ${what} unused in expressions: keys: {${left.join(', ')}}`);
}

function topLevelNames(binding: Binding, node: ConditionNode, into: Set<string>): Set<string> {
  const operand = (o: OperandNode): void => {
    if (o.kind === 'path') into.add(binding.path(o)[0] as string);
    else if (o.kind === 'function') o.args.forEach(operand);
  };
  switch (node.kind) {
    case 'and':
    case 'or':
      topLevelNames(binding, node.left, into);
      topLevelNames(binding, node.right, into);
      break;
    case 'not':
      topLevelNames(binding, node.operand, into);
      break;
    case 'compare':
      operand(node.left);
      operand(node.right);
      break;
    case 'between':
      [node.subject, node.low, node.high].forEach(operand);
      break;
    case 'in':
      [node.subject, ...node.list].forEach(operand);
      break;
    default:
      operand(node.call);
  }
  return into;
}

function conditionOf(binding: Binding, parsed: Parsed<ConditionNode>): CompiledCondition {
  const predicate: Predicate = compileCondition(binding, parsed.tree);
  const names = [...topLevelNames(binding, parsed.tree, new Set())];
  return Object.assign((item: Item | undefined) => predicate(item ?? EMPTY_ITEM), { names });
}

/**
 * Parses and binds every expression of one request, checking names and
 * values across all of them; throws DynamoDB's ValidationException for the
 * first problem found. `keySchema` is required with a key condition.
 */
export function compileRequest(
  expressions: RequestExpressions,
  names?: Record<string, string>,
  values?: Record<string, AttributeValue>,
  keySchema?: KeySchema,
): CompiledRequest {
  const { condition, filter, update, projection, keyCondition } = expressions;
  const anyExpression = [condition, filter, update, projection, keyCondition].some((e) => e !== undefined);
  checkPlaceholders('ExpressionAttributeNames', names, NAME_KEY, anyExpression);
  checkPlaceholders('ExpressionAttributeValues', values, VALUE_KEY, anyExpression);
  const nameMap = names ?? {};
  const valueMap = values ?? {};
  for (const key in valueMap) validateValue(valueMap[key], key);

  const parsedKey =
    keyCondition === undefined ? undefined : parseCondition('KeyConditionExpression', keyCondition);
  const parsedFilter = filter === undefined ? undefined : parseCondition('FilterExpression', filter);
  const parsedCondition =
    condition === undefined ? undefined : parseCondition('ConditionExpression', condition);
  const parsedUpdate = update === undefined ? undefined : parseUpdate(update);
  const parsedProjection = projection === undefined ? undefined : parseProjection(projection);

  const used = { names: new Set<string>(), values: new Set<string>() };
  for (const parsed of [parsedKey, parsedFilter, parsedCondition, parsedUpdate, parsedProjection]) {
    if (parsed) markUsed(parsed, nameMap, valueMap, used);
  }
  const bind = (kind: ExpressionKind) => new Binding(kind, nameMap, valueMap);
  const compiled: {
    -readonly [K in keyof CompiledRequest]: CompiledRequest[K];
  } = {};
  if (parsedKey) {
    if (!keySchema) throw new Error('compileRequest: a key condition needs the key schema');
    compiled.keyCondition = compileKeyCondition(bind('KeyConditionExpression'), parsedKey.tree, keySchema);
  }
  if (parsedUpdate) compiled.update = compileUpdate(bind('UpdateExpression'), parsedUpdate.tree);
  if (parsedCondition) compiled.condition = conditionOf(bind('ConditionExpression'), parsedCondition);
  if (parsedFilter) compiled.filter = conditionOf(bind('FilterExpression'), parsedFilter);
  if (parsedProjection)
    compiled.projection = compileProjection(bind('ProjectionExpression'), parsedProjection.tree);

  unused('ExpressionAttributeNames', Object.keys(nameMap), used.names);
  unused('ExpressionAttributeValues', Object.keys(valueMap), used.values);
  return compiled;
}

// --- key conditions (Developer Guide, "Key condition expressions for the Query operation") ---

const KEY_COMPARATORS = new Set(['=', '<', '<=', '>', '>=']);

/** The simple conditions ANDed together, or DynamoDB's error for any other operator. */
function conjuncts(binding: Binding, node: ConditionNode, into: ConditionNode[]): ConditionNode[] {
  const invalid = (operator: string) =>
    binding.error(`Invalid operator used in KeyConditionExpression: ${operator}`);
  switch (node.kind) {
    case 'and':
      conjuncts(binding, node.left, into);
      conjuncts(binding, node.right, into);
      return into;
    case 'or':
      throw invalid('OR');
    case 'not':
      throw invalid('NOT');
    case 'in':
      throw invalid('IN');
    case 'compare':
      if (!KEY_COMPARATORS.has(node.op)) throw invalid(node.op);
      break;
    case 'call':
      if (node.call.name !== 'begins_with') throw invalid(node.call.name);
      break;
  }
  into.push(node);
  return into;
}

interface KeyPart {
  readonly name: string;
  readonly op: SortCondition['op'];
  readonly values: AttributeValue[];
}

const FLIPPED: Record<string, SortCondition['op']> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

function keyPart(binding: Binding, node: ConditionNode): KeyPart {
  let subject: Operand;
  let op: SortCondition['op'];
  let operands: Operand[];
  if (node.kind === 'compare') {
    const left = conditionOperand(binding, node.left);
    const right = conditionOperand(binding, node.right);
    // `:v = pk` reads as `pk = :v`.
    const swap = left.path === undefined && right.path !== undefined;
    subject = swap ? right : left;
    operands = [swap ? left : right];
    op = swap ? FLIPPED[node.op]! : (node.op as SortCondition['op']);
  } else if (node.kind === 'between') {
    subject = conditionOperand(binding, node.subject);
    operands = [conditionOperand(binding, node.low), conditionOperand(binding, node.high)];
    op = 'BETWEEN';
  } else {
    const call = (node as { call: FunctionNode }).call;
    subject = conditionOperand(binding, call.args[0]!);
    operands = [conditionOperand(binding, call.args[1]!)];
    op = 'begins_with';
  }
  // Binding the node as a condition runs DynamoDB's operand checks (types, BETWEEN bounds).
  compileCondition(binding, node);
  if (subject.path === undefined || operands.some((o) => o.path !== undefined)) {
    throw validation('Query key condition not supported');
  }
  if (subject.path.length > 1) {
    throw binding.error('KeyConditionExpressions cannot have conditions on nested attributes');
  }
  return { name: subject.path[0] as string, op, values: operands.map((o) => o.get(EMPTY_ITEM)!) };
}

function compileKeyCondition(binding: Binding, node: ConditionNode, schema: KeySchema): KeyCondition {
  let partition: KeyPart | undefined;
  let sort: KeyPart | undefined;
  for (const part of conjuncts(binding, node, []).map((n) => keyPart(binding, n))) {
    if (part.name === schema.hash && !partition) partition = part;
    else if (part.name === schema.range && !sort) sort = part;
    else if (part.name === schema.hash || part.name === schema.range) {
      throw validation('KeyConditionExpressions must only contain one condition per key');
    } else {
      throw validation(`Query condition missed key schema element: ${schema.range ?? schema.hash}`);
    }
    const type = schema.types?.[part.name];
    if (type !== undefined && part.values.some((v) => typeOf(v) !== type)) {
      throw validation(
        'One or more parameter values were invalid: Condition parameter type does not match schema type',
      );
    }
    if (part.op === 'begins_with' && type === 'N') {
      throw binding.error(
        'Incorrect operand type for operator or function; operator or function: begins_with, operand type: N',
      );
    }
  }
  if (!partition) throw validation(`Query condition missed key schema element: ${schema.hash}`);
  if (partition.op !== '=') throw validation('Query key condition not supported');
  return sort
    ? { partitionValue: partition.values[0]!, sort: { op: sort.op, values: sort.values } }
    : { partitionValue: partition.values[0]! };
}

/** Whether a sort key value meets a key condition's sort condition. */
export function sortMatches(sort: SortCondition, value: AttributeValue): boolean {
  const [a, b] = sort.values as [AttributeValue, AttributeValue];
  switch (sort.op) {
    case '=':
      return valuesEqual(value, a);
    case '<':
      return compareScalars(value, a) < 0;
    case '<=':
      return compareScalars(value, a) <= 0;
    case '>':
      return compareScalars(value, a) > 0;
    case '>=':
      return compareScalars(value, a) >= 0;
    case 'BETWEEN':
      return compareScalars(value, a) >= 0 && compareScalars(value, b) <= 0;
    default:
      return beginsWith(value, a);
  }
}
