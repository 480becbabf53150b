/**
 * Matching an event against a compiled event pattern (pattern.ts): the event
 * flattened to its leaves, each branch's fields tested, and the leaves that
 * match chosen so that none come from different elements of one array.
 */
import type { Leaf, LeafTest } from './pattern-leaves';

/** What one pattern path demands: a leaf passing any test, or (if `absent`) no leaf at all. */
export interface FieldRule {
  readonly tests: readonly LeafTest[];
  readonly absent: boolean;
}

/** One alternative of a pattern (patterns with `$or` have several): all its fields must match. */
export type Branch = Map<string, FieldRule>;

/** A leaf of the event, with the arrays it sits in as [arrayId, index, arrayId, index, ...]. */
export interface EventField {
  readonly value: Leaf;
  readonly arrays: readonly number[];
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

export function flattenEvent(event: Record<string, unknown>): Map<string, EventField[]> {
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

export function matchesBranch(branch: Branch, fields: Map<string, EventField[]>): boolean {
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
