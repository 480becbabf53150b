/**
 * The syntax of DynamoDB's expression languages (expression-parser.ts parses
 * them): the trees a parse yields, and the tokens it reads.
 */

export type ExpressionKind =
  | 'ConditionExpression'
  | 'FilterExpression'
  | 'KeyConditionExpression'
  | 'UpdateExpression'
  | 'ProjectionExpression';

/** A document path: names (a `#placeholder` starts with '#', which no literal name can) and list indexes. */
export interface PathNode {
  readonly kind: 'path';
  readonly parts: readonly (string | number)[];
}

export interface ValueNode {
  readonly kind: 'value';
  readonly name: string;
}

export interface FunctionNode {
  readonly kind: 'function';
  readonly name: string;
  readonly args: readonly OperandNode[];
}

/** `a + b` / `a - b`, only on the right of an update's SET. */
export interface ArithmeticNode {
  readonly kind: 'arithmetic';
  readonly op: '+' | '-';
  readonly left: OperandNode;
  readonly right: OperandNode;
}

export type OperandNode = PathNode | ValueNode | FunctionNode | ArithmeticNode;

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type ConditionNode =
  | {
      readonly kind: 'compare';
      readonly op: Comparator;
      readonly left: OperandNode;
      readonly right: OperandNode;
    }
  | {
      readonly kind: 'between';
      readonly subject: OperandNode;
      readonly low: OperandNode;
      readonly high: OperandNode;
    }
  | { readonly kind: 'in'; readonly subject: OperandNode; readonly list: readonly OperandNode[] }
  | { readonly kind: 'call'; readonly call: FunctionNode }
  | { readonly kind: 'and' | 'or'; readonly left: ConditionNode; readonly right: ConditionNode }
  | { readonly kind: 'not'; readonly operand: ConditionNode };

export interface UpdateNode {
  /** Every action's path, in the order written (for the overlap check's wording). */
  readonly paths: readonly PathNode[];
  readonly set: readonly { readonly path: PathNode; readonly value: OperandNode }[];
  readonly remove: readonly PathNode[];
  readonly add: readonly { readonly path: PathNode; readonly value: ValueNode }[];
  readonly delete: readonly { readonly path: PathNode; readonly value: ValueNode }[];
}

/** What every parsed expression carries: the placeholders it uses, for the defined/unused checks. */
export interface Parsed<T> {
  readonly kind: ExpressionKind;
  readonly tree: T;
  readonly names: readonly string[];
  readonly values: readonly string[];
}

/** One token of an expression's text. */
export interface Token {
  readonly type: 'id' | 'name' | 'value' | 'int' | 'op' | 'eof';
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

const isWordStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isWordPart = (c: number) => isWordStart(c) || (c >= 48 && c <= 57);

/** The expression's text as tokens, ending with `eof`. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    const start = i;
    let type: Token['type'] = 'op';
    if (isWordStart(c)) {
      type = 'id';
      while (i < source.length && isWordPart(source.charCodeAt(i))) i++;
    } else if (c >= 48 && c <= 57) {
      type = 'int';
      while (i < source.length && source.charCodeAt(i) >= 48 && source.charCodeAt(i) <= 57) i++;
    } else if ((c === 35 || c === 58) && i + 1 < source.length && isWordPart(source.charCodeAt(i + 1))) {
      type = c === 35 ? 'name' : 'value';
      i++;
      while (i < source.length && isWordPart(source.charCodeAt(i))) i++;
    } else {
      const two = source.slice(i, i + 2);
      i += two === '<>' || two === '<=' || two === '>=' ? 2 : 1;
    }
    tokens.push({ type, text: source.slice(start, i), start, end: i });
  }
  tokens.push({ type: 'eof', text: '<EOF>', start: source.length, end: source.length });
  return tokens;
}
