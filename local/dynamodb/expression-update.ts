/**
 * Update expressions (Developer Guide, "Using update expressions in
 * DynamoDB") and projection expressions ("Using projection expressions in
 * DynamoDB"), compiled against one request's names and values.
 *
 * An update never changes the item it is given: it copies the top level and
 * deep-copies only the attributes whose insides it edits, so the engine
 * keeps the old image for streams and ReturnValues.
 */
import { validation } from './errors';
import { type Binding, checkOverlaps, getPath, type Path } from './expression-eval';
import type { OperandNode, PathNode, UpdateNode } from './expression-parser';
import {
  type AttributeValue,
  addNumbers,
  bytesOf,
  type Item,
  normalizeNumber,
  own,
  subtractNumbers,
  typeOf,
} from './values';

/** An update compiled: the item it makes of an item, and the paths it writes. */
export interface CompiledUpdate {
  (item: Item): Item;
  /** Every action's path, resolved, in the order written. */
  readonly paths: readonly Path[];
  /** The top-level attributes the update touches. */
  readonly names: readonly string[];
}

/** A projection compiled: the item reduced to the projected paths, nested structure kept. */
export interface CompiledProjection {
  (item: Item): Item;
  readonly paths: readonly Path[];
}

const wrongType = () => validation('An operand in the update expression has an incorrect data type');
const invalidPath = () =>
  validation('The document path provided in the update expression is invalid for update');
const missing = () =>
  validation('The provided expression refers to an attribute that does not exist in the item');

type ValueOf = (item: Item) => AttributeValue;

/** The type names DynamoDB prints for ADD's and DELETE's operands. */
const TYPE_NAMES: Record<string, string> = {
  S: 'STRING',
  N: 'NUMBER',
  B: 'BINARY',
  NULL: 'NULL',
  BOOL: 'BOOLEAN',
  L: 'LIST',
  M: 'MAP',
};

function staticType(binding: Binding, node: OperandNode): string | undefined {
  if (node.kind === 'value') return typeOf(binding.value(node.name));
  if (node.kind === 'arithmetic') return 'N';
  if (node.kind === 'function') return node.name === 'list_append' ? 'L' : staticType(binding, node.args[1]!);
  return undefined;
}

function updateOperand(binding: Binding, node: OperandNode): ValueOf {
  switch (node.kind) {
    case 'value': {
      const value = binding.value(node.name);
      return () => value;
    }
    case 'path': {
      const path = binding.path(node);
      return (item) => getPath(item, path) ?? throwError(missing());
    }
    case 'arithmetic': {
      for (const side of [node.left, node.right]) {
        const type = staticType(binding, side);
        if (type !== undefined && type !== 'N') throw incorrectOperand(binding, node.op, type);
      }
      const left = updateOperand(binding, node.left);
      const right = updateOperand(binding, node.right);
      const combine = node.op === '+' ? addNumbers : subtractNumbers;
      return (item) => {
        const a = left(item).N;
        const b = right(item).N;
        if (a === undefined || b === undefined) throw wrongType();
        return { N: combine(a, b) };
      };
    }
    default: {
      if (node.name === 'if_not_exists') {
        const target = node.args[0]!;
        if (target.kind !== 'path') {
          throw binding.error(
            'Operator or function requires a document path; operator or function: if_not_exists',
          );
        }
        const path = binding.path(target);
        const fallback = updateOperand(binding, node.args[1]!);
        return (item) => getPath(item, path) ?? fallback(item);
      }
      // list_append: the parser accepts no other function in an update.
      for (const arg of node.args) {
        const type = staticType(binding, arg);
        if (type !== undefined && type !== 'L') throw incorrectOperand(binding, 'list_append', type);
      }
      const first = updateOperand(binding, node.args[0]!);
      const second = updateOperand(binding, node.args[1]!);
      return (item) => {
        const a = first(item).L;
        const b = second(item).L;
        if (a === undefined || b === undefined) throw wrongType();
        return { L: [...a, ...b] };
      };
    }
  }
}

function incorrectOperand(binding: Binding, fn: string, type: string) {
  return binding.error(
    `Incorrect operand type for operator or function; operator or function: ${fn}, operand type: ${type}`,
  );
}

function throwError(error: Error): never {
  throw error;
}

function cloneValue(value: AttributeValue): AttributeValue {
  if (value.L !== undefined) return { L: value.L.map(cloneValue) };
  if (value.M !== undefined) {
    const map: Record<string, AttributeValue> = {};
    for (const key in value.M) map[key] = cloneValue(value.M[key]!);
    return { M: map };
  }
  return value;
}

/** The item being built: a copy of the original whose edited top-level attributes are deep copies. */
class Draft {
  readonly item: Item;
  private readonly copied = new Set<string>();

  constructor(original: Item) {
    this.item = { ...original };
  }

  /** The container holding path's last part, made writable; undefined if a parent is missing. */
  private parent(path: Path): AttributeValue | undefined {
    const name = path[0] as string;
    let value = own(this.item, name);
    if (value === undefined) return undefined;
    if (!this.copied.has(name)) {
      value = cloneValue(value);
      this.item[name] = value;
      this.copied.add(name);
    }
    for (let i = 1; i < path.length - 1 && value !== undefined; i++) {
      const part = path[i]!;
      value =
        typeof part === 'number' ? value.L?.[part] : value.M !== undefined ? own(value.M, part) : undefined;
    }
    return value;
  }

  set(path: Path, value: AttributeValue): void {
    if (path.length === 1) {
      this.item[path[0] as string] = value;
      this.copied.delete(path[0] as string);
      return;
    }
    const parent = this.parent(path);
    const last = path[path.length - 1]!;
    if (parent === undefined) throw invalidPath();
    if (typeof last === 'number') {
      if (parent.L === undefined) throw invalidPath();
      // An index past the end appends, as DynamoDB does.
      if (last >= parent.L.length) parent.L.push(value);
      else parent.L[last] = value;
    } else {
      if (parent.M === undefined) throw invalidPath();
      parent.M[last] = value;
    }
  }

  remove(path: Path): void {
    if (path.length === 1) {
      delete this.item[path[0] as string];
      return;
    }
    const parent = this.parent(path);
    const last = path[path.length - 1]!;
    if (parent === undefined) return;
    if (typeof last === 'number') {
      if (parent.L !== undefined && last < parent.L.length) parent.L.splice(last, 1);
    } else if (parent.M !== undefined) {
      delete parent.M[last];
    }
  }
}

/** Removals deepest and highest index first, so that removing one list element shifts none still to remove. */
function laterFirst(a: Path, b: Path): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return y - x;
    return 0;
  }
  return b.length - a.length;
}

const SET_TYPES = new Set(['SS', 'NS', 'BS']);

function memberKey(type: string): (member: string) => string {
  if (type === 'NS') return normalizeNumber;
  if (type === 'BS') return (member) => bytesOf(member).toString('hex');
  return (member) => member;
}

function setOf(type: string, members: string[]): AttributeValue {
  return type === 'SS' ? { SS: members } : type === 'NS' ? { NS: members } : { BS: members };
}

function membersOf(value: AttributeValue, type: string): string[] | undefined {
  return type === 'SS' ? value.SS : type === 'NS' ? value.NS : type === 'BS' ? value.BS : undefined;
}

function added(current: AttributeValue | undefined, value: AttributeValue): AttributeValue {
  if (current === undefined) return value;
  const type = typeOf(value);
  if (type === 'N') {
    if (current.N === undefined) throw wrongType();
    return { N: addNumbers(current.N, value.N!) };
  }
  const existing = membersOf(current, type);
  if (existing === undefined) throw wrongType();
  const key = memberKey(type);
  const seen = new Set(existing.map(key));
  const union = [...existing];
  for (const member of membersOf(value, type)!) {
    if (!seen.has(key(member))) {
      seen.add(key(member));
      union.push(member);
    }
  }
  return setOf(type, union);
}

function deleted(current: AttributeValue, value: AttributeValue): AttributeValue | undefined {
  const type = typeOf(value);
  const existing = membersOf(current, type);
  if (existing === undefined) throw wrongType();
  const key = memberKey(type);
  const gone = new Set(membersOf(value, type)!.map(key));
  const rest = existing.filter((member) => !gone.has(key(member)));
  return rest.length > 0 ? setOf(type, rest) : undefined;
}

function checkOperand(binding: Binding, operator: 'ADD' | 'DELETE', value: AttributeValue): void {
  const type = typeOf(value);
  if (SET_TYPES.has(type) || (operator === 'ADD' && type === 'N')) return;
  throw binding.error(
    `Incorrect operand type for operator or function; operator: ${operator}, operand type: ${TYPE_NAMES[type] ?? type}`,
  );
}

/** Compiles an update expression: SET, REMOVE, ADD and DELETE, each read against the item as it was. */
export function compileUpdate(binding: Binding, node: UpdateNode): CompiledUpdate {
  const paths = node.paths.map((path) => binding.path(path));
  checkOverlaps(binding, paths);
  const resolve = (path: PathNode) => binding.path(path);
  const sets = node.set.map((action) => ({
    path: resolve(action.path),
    value: updateOperand(binding, action.value),
  }));
  const removes = node.remove.map(resolve).sort(laterFirst);
  const adds = node.add.map((action) => {
    const value = binding.value(action.value.name);
    checkOperand(binding, 'ADD', value);
    return { path: resolve(action.path), value };
  });
  const deletes = node.delete.map((action) => {
    const value = binding.value(action.value.name);
    checkOperand(binding, 'DELETE', value);
    return { path: resolve(action.path), value };
  });
  const apply = (item: Item): Item => {
    // Every operand reads the item as it was before the update (paths do not overlap, so order is free).
    const setValues = sets.map((action) => action.value(item));
    const addValues = adds.map((action) => added(getPath(item, action.path), action.value));
    const deleteValues = deletes.map((action) => {
      const current = getPath(item, action.path);
      return current === undefined ? null : deleted(current, action.value);
    });
    const draft = new Draft(item);
    for (let i = 0; i < sets.length; i++) draft.set(sets[i]!.path, setValues[i]!);
    for (let i = 0; i < adds.length; i++) draft.set(adds[i]!.path, addValues[i]!);
    deletes.forEach((action, i) => {
      const value = deleteValues[i];
      if (value === null) return;
      if (value === undefined) draft.remove(action.path);
      else draft.set(action.path, value);
    });
    for (const path of removes) draft.remove(path);
    return draft.item;
  };
  const names = [...new Set(paths.map((path) => path[0] as string))];
  return Object.assign(apply, { paths, names });
}

// --- projections ------------------------------------------------------------------

/** A projected value being assembled: maps and lists keep only the projected members. */
type Projected =
  | { kind: 'whole'; value: AttributeValue }
  | { kind: 'map'; members: Map<string, Projected> }
  | { kind: 'list'; members: Map<number, Projected> };

function assemble(node: Projected): AttributeValue {
  if (node.kind === 'whole') return node.value;
  if (node.kind === 'map') {
    const map: Record<string, AttributeValue> = {};
    for (const [key, member] of node.members) map[key] = assemble(member);
    return { M: map };
  }
  // Projected list elements keep their order, without gaps.
  return { L: [...node.members.entries()].sort((a, b) => a[0] - b[0]).map(([, member]) => assemble(member)) };
}

function projectPath(item: Item, path: Path, into: Map<string, Projected>): void {
  const value = getPath(item, path);
  if (value === undefined) return;
  let members: Map<string | number, Projected> = into as Map<string | number, Projected>;
  for (let i = 0; i < path.length - 1; i++) {
    const part = path[i]!;
    const kind = typeof path[i + 1] === 'number' ? 'list' : 'map';
    let node = members.get(part);
    if (node === undefined) {
      node = kind === 'list' ? { kind, members: new Map() } : { kind, members: new Map() };
      members.set(part, node);
    }
    members = (node as { members: Map<string | number, Projected> }).members;
  }
  members.set(path[path.length - 1]!, { kind: 'whole', value });
}

/** `item` reduced to `paths`, nested structure kept (a projection's, and UpdateItem's UPDATED_ return values). */
export function projectPaths(item: Item, paths: readonly Path[]): Item {
  const top = new Map<string, Projected>();
  for (const path of paths) projectPath(item, path, top);
  const out: Item = {};
  for (const [name, node] of top) out[name] = assemble(node);
  return out;
}

/** Compiles a projection expression (paths must not overlap). */
export function compileProjection(binding: Binding, nodes: readonly PathNode[]): CompiledProjection {
  const paths = nodes.map((node) => binding.path(node));
  checkOverlaps(binding, paths);
  if (paths.every((path) => path.length === 1)) {
    const names = paths.map((path) => path[0] as string);
    return Object.assign(
      (item: Item) => {
        const out: Item = {};
        for (const name of names) {
          const value = own(item, name);
          if (value !== undefined) out[name] = value;
        }
        return out;
      },
      { paths },
    );
  }
  return Object.assign((item: Item) => projectPaths(item, paths), { paths });
}
