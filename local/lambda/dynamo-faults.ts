/**
 * DynamoDB refusing a share of the functions' calls, as AWS does under
 * pressure, or losing the answer to a write it made (`POST
 * /_local/faults/dynamodb`). A refused call never reaches
 * the DynamoDB engine: the local AWS endpoint answers it (local/function-call-gate.ts,
 * `gateDynamo`, after the caller's IAM check) with the status, `__type` and
 * message AWS sends, so the SDK classifies and retries it exactly as it
 * would on AWS (throughput and throttling errors are retried by the SDK
 * itself; a cancelled transaction is the caller's to handle). Only the
 * functions' calls are refused, never those of tests or the load tools. Off
 * by default; with no rules no call is looked at for a fault.
 */

/** The refusals DynamoDB makes under pressure. */
export const DYNAMO_FAULT_ERRORS = [
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'TransactionConflict',
] as const;
export type DynamoFaultError = (typeof DYNAMO_FAULT_ERRORS)[number];

export interface DynamoRefusalRule {
  readonly error: DynamoFaultError;
  /** Share of the matching calls refused, from 0 to 1. */
  readonly rate: number;
  /**
   * The operations refused (e.g. `TransactWriteItems`); default: every
   * operation for a throughput or throttling error, the transactions for a
   * transaction conflict (which may also name single writes, never reads).
   */
  readonly operations?: readonly string[];
}

/**
 * How a lost answer is lost: DynamoDB answers `500 InternalServerError`
 * after its write committed, or the connection is reset before the answer
 * arrives. The SDK retries both (a server error, a transient network error).
 */
export const LOST_ANSWER_WAYS = ['InternalServerError', 'ConnectionReset'] as const;
export type LostAnswerWay = (typeof LOST_ANSWER_WAYS)[number];

/**
 * A write that commits but whose answer never reaches the caller: the engine
 * applies it, then the caller gets a 500 or a reset connection, and the SDK
 * sends it again. Only writes the engine made are lost (a refused write's
 * answer, e.g. a failed condition, is the same whatever the retry finds).
 */
export interface LostAnswerRule {
  readonly kind: 'lost-answer';
  /** Share of the matching writes whose answer is lost, from 0 to 1. */
  readonly rate: number;
  /** The writes (default: PutItem, UpdateItem, DeleteItem, TransactWriteItems). */
  readonly operations?: readonly string[];
  /** How (default: either, drawn per call). */
  readonly way?: LostAnswerWay;
  /**
   * At most this many answers lost (then the rule lies dormant until set again):
   * `1` loses the first matching write's answer and no other, as tests need.
   */
  readonly count?: number;
  /**
   * Each write's answer lost at most once: its retry (the same call sent
   * again) is answered. With rate 1, every write commits, loses its first
   * answer and is retried once, as tests need.
   */
  readonly once?: boolean;
}

export type DynamoFaultRule = DynamoRefusalRule | LostAnswerRule;

/** The writes whose answers a lost-answer rule loses by default. */
const SINGLE_AND_TRANSACTION_WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'];

/** The operations that can meet a transaction conflict on AWS: writes (to an item a transaction holds) and transactions. */
const CONFLICTING_OPERATIONS = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'TransactWriteItems',
  'TransactGetItems',
]);

/** DynamoDB's own operations (not the streams API, which has its own limits and is read by the pollers). */
const DYNAMODB_OPERATIONS = new Set([
  ...CONFLICTING_OPERATIONS,
  'GetItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
]);

export function validateDynamoFaults(rules: unknown): DynamoFaultRule[] {
  if (!Array.isArray(rules)) throw new Error('DynamoDB faults: an array of rules');
  return rules.map((given: unknown, index): DynamoFaultRule => {
    if ((given as { kind?: unknown } | null)?.kind !== undefined) return validateLostAnswer(given, index);
    const rule = given as Partial<DynamoRefusalRule>;
    if (!DYNAMO_FAULT_ERRORS.includes(rule?.error as DynamoFaultError))
      throw new Error(`DynamoDB fault ${index}: error must be one of ${DYNAMO_FAULT_ERRORS.join(', ')}`);
    if (typeof rule.rate !== 'number' || !(rule.rate >= 0 && rule.rate <= 1))
      throw new Error(`DynamoDB fault ${index}: rate must be a number from 0 to 1`);
    if (rule.operations !== undefined) {
      if (!Array.isArray(rule.operations) || rule.operations.some((o) => !DYNAMODB_OPERATIONS.has(o)))
        throw new Error(
          `DynamoDB fault ${index}: operations must be among ${[...DYNAMODB_OPERATIONS].join(', ')}`,
        );
    }
    return {
      error: rule.error as DynamoFaultError,
      rate: rule.rate,
      ...(rule.operations ? { operations: [...rule.operations] } : {}),
    };
  });
}

function validateLostAnswer(given: unknown, index: number): LostAnswerRule {
  const rule = given as Partial<LostAnswerRule>;
  if (rule.kind !== 'lost-answer') throw new Error(`DynamoDB fault ${index}: kind must be lost-answer`);
  if (typeof rule.rate !== 'number' || !(rule.rate >= 0 && rule.rate <= 1))
    throw new Error(`DynamoDB fault ${index}: rate must be a number from 0 to 1`);
  if (rule.way !== undefined && !LOST_ANSWER_WAYS.includes(rule.way))
    throw new Error(`DynamoDB fault ${index}: way must be one of ${LOST_ANSWER_WAYS.join(', ')}`);
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count >= 1))
    throw new Error(`DynamoDB fault ${index}: count must be a positive integer`);
  if (rule.once !== undefined && typeof rule.once !== 'boolean')
    throw new Error(`DynamoDB fault ${index}: once must be true or false`);
  if (rule.operations !== undefined) {
    const writes = [...CONFLICTING_OPERATIONS, 'BatchWriteItem'].filter((o) => o !== 'TransactGetItems');
    if (!Array.isArray(rule.operations) || rule.operations.some((o) => !writes.includes(o)))
      throw new Error(
        `DynamoDB fault ${index}: operations of a lost answer must be among ${writes.join(', ')}`,
      );
  }
  return {
    kind: 'lost-answer',
    rate: rule.rate,
    ...(rule.operations ? { operations: [...rule.operations] } : {}),
    ...(rule.way ? { way: rule.way } : {}),
    ...(rule.count !== undefined ? { count: rule.count } : {}),
    ...(rule.once !== undefined ? { once: rule.once } : {}),
  };
}

/**
 * A transaction conflict refuses transactions unless the rule names single
 * writes too: under contention AWS cancels a transaction whose items another
 * transaction holds, while a single write meets one only on an item a
 * transaction is changing, which a refusal drawn at random cannot know (it
 * would refuse writes of new items no transaction could hold).
 */
const TRANSACTIONS = ['TransactWriteItems', 'TransactGetItems'];

const applies = (rule: DynamoRefusalRule, operation: string) =>
  (
    rule.operations ?? (rule.error === 'TransactionConflict' ? TRANSACTIONS : [...DYNAMODB_OPERATIONS])
  ).includes(operation) &&
  (rule.error !== 'TransactionConflict' || CONFLICTING_OPERATIONS.has(operation));

/** The rule that refuses this call, if one draws it (`random` in [0, 1) per rule, for tests). */
export function refusalFor(
  rules: readonly DynamoFaultRule[],
  operation: string,
  random: () => number = Math.random,
): DynamoRefusalRule | undefined {
  for (const rule of rules)
    if (!('kind' in rule) && applies(rule, operation) && random() < rule.rate) return rule;
  return undefined;
}

/** What the lost-answer rules have done since they were set: answers lost per rule, and the calls lost (for `once`). */
export interface LostAnswers {
  readonly perRule: Map<LostAnswerRule, number>;
  readonly calls: Set<string>;
}

/** A call's identity for `once`: the SDK's retry sends the same operation and body (a transaction, its token). */
export const callKey = (operation: string, input: Record<string, unknown>) =>
  `${operation} ${JSON.stringify(input)}`;

/**
 * Whether the answer to this write is to be lost, and how (`random` in [0, 1)
 * per draw, for tests). `lost` is what the rules have lost so far (for
 * `count` and `once`); the caller records a loss when it makes one.
 */
export function lostAnswerFor(
  rules: readonly DynamoFaultRule[],
  operation: string,
  lost: LostAnswers,
  random: () => number = Math.random,
  call = '',
): { rule: LostAnswerRule; way: LostAnswerWay } | undefined {
  for (const rule of rules) {
    if (!('kind' in rule)) continue;
    if (!(rule.operations ?? SINGLE_AND_TRANSACTION_WRITES).includes(operation)) continue;
    if (rule.count !== undefined && (lost.perRule.get(rule) ?? 0) >= rule.count) continue;
    if (rule.once && lost.calls.has(call)) continue;
    if (!(random() < rule.rate)) continue;
    return { rule, way: rule.way ?? (random() < 0.5 ? 'InternalServerError' : 'ConnectionReset') };
  }
  return undefined;
}

export interface DynamoErrorResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const DYNAMODB_SHAPE = 'com.amazonaws.dynamodb.v20120810#';

/**
 * AWS's answer to a refused call, as DynamoDB sends it (status 400, the JSON
 * protocol's `__type` naming the error shape, and its message). A refused
 * transaction is cancelled with one reason per item, `TransactionConflict`
 * for one of them and `None` for the rest; `input` is the request body.
 */
export function awsRefusal(
  error: DynamoFaultError,
  operation: string,
  input: Record<string, unknown>,
): DynamoErrorResponse {
  switch (error) {
    case 'ProvisionedThroughputExceededException':
      return {
        status: 400,
        body: {
          __type: `${DYNAMODB_SHAPE}ProvisionedThroughputExceededException`,
          message:
            'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
        },
      };
    case 'ThrottlingException':
      // DynamoDB's throttling answer comes from its request layer, under that layer's namespace.
      return {
        status: 400,
        body: {
          __type: 'com.amazon.coral.availability#ThrottlingException',
          message: 'Rate of requests exceeds the allowed throughput.',
        },
      };
    case 'TransactionConflict': {
      if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
        const items = Array.isArray(input.TransactItems) ? input.TransactItems.length : 1;
        const conflicted = Math.floor(Math.random() * items);
        const reasons = Array.from({ length: Math.max(items, 1) }, (_, i) =>
          i === conflicted
            ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }
            : { Code: 'None' },
        );
        return {
          status: 400,
          body: {
            __type: `${DYNAMODB_SHAPE}TransactionCanceledException`,
            // The one DynamoDB error whose message field is capitalized.
            Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
            CancellationReasons: reasons,
          },
        };
      }
      // A single-item write to an item a transaction is changing.
      return {
        status: 400,
        body: {
          __type: `${DYNAMODB_SHAPE}TransactionConflictException`,
          message: 'Transaction is ongoing for the item',
        },
      };
    }
  }
}
