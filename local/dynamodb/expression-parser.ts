/**
 * Longer than 400 lines because its recursive-descent Parser is one class
 * (about 330 lines, a method per grammar rule) sharing the token position and
 * the checks it defers to report them in DynamoDB's order.
 *
 * Parses DynamoDB's expression languages (Developer Guide, "Using expressions
 * in DynamoDB": condition and filter expressions, update expressions,
 * projection expressions, key condition expressions) into syntax trees.
 *
 * A tree depends only on the expression's text: placeholders (`#n`, `:v`)
 * stay unresolved, so trees are cached by text and bound to each request's
 * ExpressionAttributeNames/Values later (see expressions.ts). Errors found
 * from the text alone are thrown here, with DynamoDB's wording and in its
 * order: syntax first, then the checks DynamoDB makes after parsing. The
 * trees and the tokenizer are expression-syntax.ts.
 */
import { validation } from './errors';
import { isReservedWord } from './expression-reserved';
import {
  type Comparator,
  type ConditionNode,
  type ExpressionKind,
  type FunctionNode,
  type OperandNode,
  type Parsed,
  type PathNode,
  type Token,
  tokenize,
  type UpdateNode,
  type ValueNode,
} from './expression-syntax';

export type {
  ArithmeticNode,
  Comparator,
  ConditionNode,
  ExpressionKind,
  FunctionNode,
  OperandNode,
  Parsed,
  PathNode,
  UpdateNode,
  ValueNode,
} from './expression-syntax';

type UpdateBuilder = { -readonly [K in keyof UpdateNode]: UpdateNode[K][number][] };

const CONDITION_FUNCTIONS: Record<string, number> = {
  attribute_exists: 1,
  attribute_not_exists: 1,
  attribute_type: 2,
  begins_with: 2,
  contains: 2,
  size: 1,
};
const UPDATE_FUNCTIONS: Record<string, number> = { if_not_exists: 2, list_append: 2 };
const CONDITION_KEYWORDS = new Set(['AND', 'OR', 'NOT', 'BETWEEN', 'IN']);
const UPDATE_KEYWORDS = new Set(['SET', 'REMOVE', 'ADD', 'DELETE']);
const COMPARATORS = new Set(['=', '<>', '<', '<=', '>', '>=']);
const MAX_IN_OPERANDS = 100;

// The checks DynamoDB makes once the text parses, in the order it reports them.
const CHECK_ORDER = ['parens', 'function', 'misused', 'reserved', 'section', 'operands'] as const;
type Check = (typeof CHECK_ORDER)[number];

class Parser {
  private readonly tokens: Token[];
  private at = 0;
  private readonly checks = new Map<Check, string>();
  private readonly parenthesized = new WeakSet<object>();
  readonly names: string[] = [];
  readonly values: string[] = [];

  constructor(
    readonly kind: ExpressionKind,
    private readonly source: string,
  ) {
    this.tokens = tokenize(source);
  }

  private get token(): Token {
    return this.tokens[this.at]!;
  }

  private peek(offset = 1): Token {
    return this.tokens[Math.min(this.at + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const token = this.token;
    if (token.type !== 'eof') this.at++;
    return token;
  }

  /** DynamoDB's syntax error: the token, and the text from the token before it to the one after it. */
  syntaxError(): never {
    const token = this.token;
    const before = this.at > 0 ? this.tokens[this.at - 1]! : token;
    const after = token.type === 'eof' ? token : this.peek();
    const near = this.source.slice(before.start, after.end);
    throw validation(`Invalid ${this.kind}: Syntax error; token: "${token.text}", near: "${near}"`);
  }

  private isOp(text: string): boolean {
    return this.token.type === 'op' && this.token.text === text;
  }

  private expectOp(text: string): void {
    if (!this.isOp(text)) this.syntaxError();
    this.next();
  }

  private isKeyword(word: string): boolean {
    return this.token.type === 'id' && this.token.text.toUpperCase() === word;
  }

  private note(check: Check, message: string): void {
    if (!this.checks.has(check)) this.checks.set(check, message);
  }

  /** Ends the parse: rejects trailing text, then reports the first post-parse check that failed. */
  finish<T>(tree: T): Parsed<T> {
    if (this.token.type !== 'eof') this.syntaxError();
    for (const check of CHECK_ORDER) {
      const message = this.checks.get(check);
      if (message) throw validation(`Invalid ${this.kind}: ${message}`);
    }
    return { kind: this.kind, tree, names: this.names, values: this.values };
  }

  // --- operands ---------------------------------------------------------------

  private pathPart(keywords: ReadonlySet<string>): string {
    const token = this.token;
    if (token.type === 'name') {
      this.names.push(token.text);
      this.next();
      return token.text;
    }
    if (token.type !== 'id' || keywords.has(token.text.toUpperCase())) this.syntaxError();
    if (isReservedWord(token.text)) {
      this.note('reserved', `Attribute name is a reserved keyword; reserved keyword: ${token.text}`);
    }
    this.next();
    return token.text;
  }

  path(keywords: ReadonlySet<string>): PathNode {
    const parts: (string | number)[] = [this.pathPart(keywords)];
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        parts.push(this.pathPart(keywords));
      } else if (this.isOp('[')) {
        this.next();
        if (this.token.type !== 'int') this.syntaxError();
        parts.push(Number(this.next().text));
        this.expectOp(']');
      } else {
        return { kind: 'path', parts };
      }
    }
  }

  private call(functions: Record<string, number>, keywords: ReadonlySet<string>): FunctionNode {
    const name = this.next().text;
    this.expectOp('(');
    const args = [this.operand(functions, keywords)];
    while (this.isOp(',')) {
      this.next();
      args.push(this.operand(functions, keywords));
    }
    this.expectOp(')');
    const arity = functions[name];
    if (arity === undefined) this.note('function', `Invalid function name; function: ${name}`);
    else if (arity !== args.length) {
      this.note(
        'operands',
        `Incorrect number of operands for operator or function; operator or function: ${name}, number of operands: ${args.length}`,
      );
    }
    return { kind: 'function', name, args };
  }

  /** A path, a `:value`, a function call, or any of those in parentheses. */
  operand(functions: Record<string, number>, keywords: ReadonlySet<string>): OperandNode {
    const token = this.token;
    if (token.type === 'value') {
      this.values.push(token.text);
      this.next();
      return { kind: 'value', name: token.text };
    }
    if (token.type === 'op' && token.text === '(') {
      this.next();
      const inner = this.operand(functions, keywords);
      this.expectOp(')');
      return inner;
    }
    if (token.type === 'id' && this.peek().type === 'op' && this.peek().text === '(') {
      return this.call(functions, keywords);
    }
    return this.path(keywords);
  }

  // --- conditions -------------------------------------------------------------

  /** condition := and (OR and)*; NOT binds tighter than AND, AND tighter than OR. */
  condition(): ConditionNode {
    let left = this.conjunction();
    while (this.isKeyword('OR')) {
      this.next();
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): ConditionNode {
    let left = this.negation();
    while (this.isKeyword('AND')) {
      this.next();
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): ConditionNode {
    if (this.isKeyword('NOT')) {
      this.next();
      return { kind: 'not', operand: this.negation() };
    }
    const primary = this.primary();
    if (!('kind' in primary) || isOperand(primary)) this.syntaxError();
    return primary as ConditionNode;
  }

  /**
   * A parenthesised condition, or a comparison. `(` is ambiguous (a condition
   * or an operand in parentheses), so a parenthesised operand is returned as
   * is and the caller decides from the token after it.
   */
  private primary(): ConditionNode | OperandNode {
    if (this.isOp('(')) {
      this.next();
      const inner = this.parenthesizedContent();
      this.expectOp(')');
      if (this.parenthesized.has(inner)) this.note('parens', 'The expression has redundant parentheses;');
      if (isOperand(inner)) return this.comparison(inner, true);
      this.parenthesized.add(inner);
      return inner;
    }
    return this.comparison(this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS), false);
  }

  private parenthesizedContent(): ConditionNode | OperandNode {
    const start = this.at;
    const operand = this.tryOperandAlone();
    if (operand) return operand;
    this.at = start;
    return this.condition();
  }

  /** An operand directly followed by `)` (as in `(a) = :v`), or nothing. */
  private tryOperandAlone(): OperandNode | undefined {
    if (this.token.type === 'op' || this.token.type === 'eof') return undefined;
    if (this.token.type === 'id' && CONDITION_KEYWORDS.has(this.token.text.toUpperCase())) return undefined;
    const saved = { names: this.names.length, values: this.values.length, checks: new Map(this.checks) };
    try {
      const operand = this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS);
      if (this.isOp(')') && !(operand.kind === 'function' && operand.name !== 'size')) return operand;
    } catch {
      // Not an operand: parsed again as a condition, which reports the error.
    }
    this.names.length = saved.names;
    this.values.length = saved.values;
    this.checks.clear();
    for (const [k, v] of saved.checks) this.checks.set(k, v);
    return undefined;
  }

  private comparison(left: OperandNode, inParentheses: boolean): ConditionNode | OperandNode {
    const token = this.token;
    if (token.type === 'op' && COMPARATORS.has(token.text)) {
      this.next();
      const right = this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS);
      this.misusedFunctions([left, right]);
      return { kind: 'compare', op: token.text as Comparator, left, right };
    }
    if (this.isKeyword('BETWEEN')) {
      this.next();
      const low = this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS);
      if (!this.isKeyword('AND')) this.syntaxError();
      this.next();
      const high = this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS);
      this.misusedFunctions([left, low, high]);
      return { kind: 'between', subject: left, low, high };
    }
    if (this.isKeyword('IN')) {
      this.next();
      this.expectOp('(');
      const list = [this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS)];
      while (this.isOp(',')) {
        this.next();
        list.push(this.operand(CONDITION_FUNCTIONS, CONDITION_KEYWORDS));
      }
      this.expectOp(')');
      this.misusedFunctions([left, ...list]);
      if (list.length > MAX_IN_OPERANDS) {
        this.note(
          'operands',
          `The IN operator is provided with too many operands; number of operands: ${list.length}`,
        );
      }
      return { kind: 'in', subject: left, list };
    }
    if (left.kind === 'function') {
      if (left.name === 'size') this.misusedFunctions([left], true);
      return { kind: 'call', call: left };
    }
    if (inParentheses) this.syntaxError();
    return left;
  }

  /** Only size() is an operand; the other functions are conditions, and size() is not. */
  private misusedFunctions(operands: OperandNode[], sizeAlone = false): void {
    for (const operand of operands) {
      if (operand.kind === 'function' && (sizeAlone || operand.name !== 'size')) {
        this.note(
          'misused',
          `The function is not allowed to be used this way in an expression; function: ${operand.name}`,
        );
      }
    }
  }

  // --- updates ----------------------------------------------------------------

  update(): UpdateNode {
    const node: UpdateBuilder = { paths: [], set: [], remove: [], add: [], delete: [] };
    const seen = new Set<string>();
    do {
      const clause = this.token.type === 'id' ? this.token.text.toUpperCase() : '';
      if (!UPDATE_KEYWORDS.has(clause)) this.syntaxError();
      this.next();
      if (seen.has(clause))
        this.note('section', `The "${clause}" section can only be used once in an update expression;`);
      seen.add(clause);
      this.updateAction(clause, node);
      while (this.isOp(',')) {
        this.next();
        this.updateAction(clause, node);
      }
    } while (this.token.type !== 'eof');
    return node;
  }

  private updateAction(clause: string, node: UpdateBuilder): void {
    const path = this.path(UPDATE_KEYWORDS);
    node.paths.push(path);
    if (clause === 'SET') {
      this.expectOp('=');
      node.set.push({ path, value: this.setValue() });
    } else if (clause === 'REMOVE') {
      node.remove.push(path);
    } else {
      if (this.token.type !== 'value') this.syntaxError();
      this.values.push(this.token.text);
      const value: ValueNode = { kind: 'value', name: this.next().text };
      (clause === 'ADD' ? node.add : node.delete).push({ path, value });
    }
  }

  private setValue(): OperandNode {
    const left = this.operand(UPDATE_FUNCTIONS, UPDATE_KEYWORDS);
    if (this.isOp('+') || this.isOp('-')) {
      const op = this.next().text as '+' | '-';
      return { kind: 'arithmetic', op, left, right: this.operand(UPDATE_FUNCTIONS, UPDATE_KEYWORDS) };
    }
    return left;
  }

  // --- projections ------------------------------------------------------------

  projection(): PathNode[] {
    const paths = [this.path(CONDITION_KEYWORDS_NONE)];
    while (this.isOp(',')) {
      this.next();
      paths.push(this.path(CONDITION_KEYWORDS_NONE));
    }
    return paths;
  }
}

// A projection has no keywords of its own: every reserved word is just a reserved word there.
const CONDITION_KEYWORDS_NONE: ReadonlySet<string> = new Set();

function isOperand(node: ConditionNode | OperandNode): node is OperandNode {
  return (
    node.kind === 'path' || node.kind === 'value' || node.kind === 'function' || node.kind === 'arithmetic'
  );
}

function parseText(kind: ExpressionKind, source: string): Parsed<unknown> {
  if (source.trim() === '') throw validation(`Invalid ${kind}: The expression can not be empty;`);
  const parser = new Parser(kind, source);
  switch (kind) {
    case 'UpdateExpression':
      return parser.finish(parser.update());
    case 'ProjectionExpression':
      return parser.finish(parser.projection());
    default:
      return parser.finish(parser.condition());
  }
}

// The same few expressions repeat with different values: parse each text once.
const CACHE_LIMIT = 2000;
const cache = new Map<string, Parsed<unknown>>();

function parseCached(kind: ExpressionKind, source: string): Parsed<unknown> {
  const key = `${kind}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const parsed = parseText(kind, source);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, parsed);
  return parsed;
}

export const parseCondition = (
  kind: 'ConditionExpression' | 'FilterExpression' | 'KeyConditionExpression',
  source: string,
) => parseCached(kind, source) as Parsed<ConditionNode>;

export const parseUpdate = (source: string) => parseCached('UpdateExpression', source) as Parsed<UpdateNode>;

export const parseProjection = (source: string) =>
  parseCached('ProjectionExpression', source) as Parsed<readonly PathNode[]>;
