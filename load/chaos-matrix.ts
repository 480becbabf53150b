/**
 * The fault matrix of `npm run chaos`: each cell is one fault (or none) under
 * which the mix runs, and what the cell may explain. Pure: the runner
 * (chaos.ts) applies a cell's faults to the local cloud, runs the load,
 * and hands what it read back to `judgeCell` (chaos-verdicts.ts).
 */

/** A saga Task state's failure or delay (the local cloud's `POST /_local/faults`; see local/stepfunctions/faults.ts). */
export interface StepFault {
  readonly state: string;
  readonly rate: number;
  readonly error?: string;
  readonly cause?: string;
  readonly delayMs?: number;
}

/** DynamoDB refusing a share of the functions' calls (`POST /_local/faults/dynamodb`). */
export interface DynamoRefusal {
  readonly error: 'ProvisionedThroughputExceededException' | 'ThrottlingException' | 'TransactionConflict';
  readonly rate: number;
}

/**
 * DynamoDB making a share of the functions' writes (single writes and
 * transactions) and then losing the answer: a 500 or a reset connection
 * after the commit, which the functions' client retries (`POST /_local/faults/dynamodb`).
 */
export interface DynamoLostAnswer {
  readonly kind: 'lost-answer';
  readonly rate: number;
}

export type DynamoFault = DynamoRefusal | DynamoLostAnswer;

/**
 * EventBridge refusing PutEvents (`POST /_local/faults/eventbridge`): a share
 * of entries one by one (`FailedEntryCount`, each its `ErrorCode`: a partial
 * failure, the caller's to put again) and a share of whole calls (a
 * `ThrottlingException`: a total failure, which the relay's client retries).
 */
export interface BusFault {
  readonly entries: number;
  readonly calls: number;
  readonly entryError?: 'ThrottlingException' | 'InternalFailure';
}

/**
 * Deliveries that fail until they are dead letters (`POST /_local/faults/deliveries`):
 * poison stream records (their consumer fails on each every time, until the
 * mapping gives it up to its on-failure destination) and a rule's target
 * failing every attempt (until its dead-letter queue). The cell then lifts
 * the fault and runs the redrive (`npm run redrive`) before its invariants.
 */
export interface DeliveryFault {
  readonly poisonRecords: number;
  readonly poisonFunction?: string;
  readonly failingTargets: number;
  readonly failingRule?: string;
}

/**
 * Functions dying with their invocation (`POST /_local/faults/functions`; see
 * local/lambda/function-deaths.ts): after their work, every write made and
 * the answer not yet sent, or at a random moment midway. The caller gets
 * Lambda's `Runtime.ExitError` (the API's client a 500) and retries: the
 * Task's Retry, the client's resend with its key, the stream's redelivery.
 */
export interface FunctionDeath {
  readonly when: 'after-work' | 'midway';
  readonly rate: number;
  readonly functions?: readonly string[];
}

export interface CellFaults {
  readonly steps: readonly StepFault[];
  readonly functions: readonly FunctionDeath[];
  readonly dynamodb: readonly DynamoFault[];
  readonly eventbridge: BusFault;
  readonly deliveries: DeliveryFault;
  readonly duplicates: {
    readonly streamRecords: number;
    readonly busEvents: number;
    readonly lateMs?: number;
  };
  /** The local cloud is killed (SIGKILL, its whole process group) halfway through the load and started again on its data. */
  readonly crash: boolean;
}

export interface Cell {
  readonly name: string;
  readonly description: string;
  readonly faults: CellFaults;
  /**
   * The cancellation reasons the cell's fault explains, besides those any
   * run may have (OUT_OF_STOCK, PAYMENT_DECLINED: the load's own outcomes).
   */
  readonly reasons: readonly string[];
  /**
   * Every request answered as it would have been without the fault: an
   * answer no run without it gives (a 5xx, a 429, no answer at all) fails
   * the cell (see `answersTheFaultChanged`). Off for a fault the client may
   * see, such as DynamoDB's throttling, which the API answers 429.
   */
  readonly answersUnchanged?: boolean;
  /**
   * `expected`: the fault must produce dead letters (a cell that made none
   * fails: the fault did not bite), and after it is lifted the redrive must
   * deliver every one before the invariants are checked.
   */
  readonly deadLetters?: 'expected';
}

/**
 * The edges every cell seeds besides its ample stock and credit (issue 41,
 * item 2): scarce products, a few units each contended by many orders, and
 * customers whose limit is about one order, so that the last unit and the
 * credit limit are reached under each fault, and compensation runs in every cell.
 */
export const EDGES = {
  scarce: { products: 4, stock: 3 },
  tight: { customers: 4, creditLimitCents: 3_000 },
} as const;

/** The saga's Task states (statemachines/order-saga.asl.json), in order. */
export const SAGA_TASKS = ['ReserveStock', 'CapturePayment', 'ConfirmOrder', 'CancelOrder'] as const;
/** Every Task's `TimeoutSeconds` in the ASL; a delayed attempt sleeps past it. */
export const TASK_TIMEOUT_SECONDS = 10;

/** How late the `duplicates-minutes-late` cell's copies come: past every saga's deadline. */
export const MINUTES_LATE_MS = 120_000;

/** Outcomes of the mix itself, fault or none: a product sold out, a customer's credit used up. */
export const LOAD_REASONS = ['OUT_OF_STOCK', 'PAYMENT_DECLINED'] as const;

/**
 * What a step's failure that no retry cures leads to: reserve and capture
 * `Catch` everything else as `TimedOut` (TIMEOUT), confirm as
 * `ConfirmationFailed`, and `StepFailed` anywhere as STEP_FAILED.
 * Compensation (CancelOrder) retries everything and cancels nothing new.
 */
const EXHAUSTED: Readonly<Record<(typeof SAGA_TASKS)[number], readonly string[]>> = {
  ReserveStock: ['TIMEOUT'],
  CapturePayment: ['TIMEOUT'],
  ConfirmOrder: ['CONFIRMATION_FAILED'],
  CancelOrder: [],
};

const none: CellFaults = {
  steps: [],
  functions: [],
  dynamodb: [],
  eventbridge: { entries: 0, calls: 0 },
  deliveries: { poisonRecords: 0, failingTargets: 0 },
  duplicates: { streamRecords: 0, busEvents: 0 },
  crash: false,
};

export const percent = (rate: number) => `${Math.round(rate * 100)}`;

/**
 * CancelOrder runs only for an order being cancelled, which the mix's ample
 * stock and credit seldom makes: its cells also send 30% of orders to
 * compensation (ConfirmOrder failing with its business error, so that stock
 * reserved and a payment captured must both be undone), or its fault would
 * meet almost no attempt.
 */
const COMPENSATED: StepFault = { state: 'ConfirmOrder', rate: 0.3, error: 'ConfirmationFailed' };
const withCompensation = (state: string, faults: readonly StepFault[]) =>
  state === 'CancelOrder' ? [...faults, COMPENSATED] : faults;
const COMPENSATED_REASONS = (state: string) => (state === 'CancelOrder' ? ['CONFIRMATION_FAILED'] : []);
const compensationNote = (state: string) =>
  state === 'CancelOrder'
    ? ' (30% of orders sent to compensation: ConfirmOrder fails ConfirmationFailed)'
    : '';

/**
 * The matrix: a baseline; each saga step failing 10% and 50% of its attempts
 * with the retryable `TransientError` and with `StepFailed` (the step's
 * non-retryable error: not retried with backoff, the order cancelled
 * STEP_FAILED after its two extra attempts); each step's attempts delayed
 * past the Task timeout (30% of attempts, so most orders still get through
 * on a retry while the late attempts run on); every stream batch and bus
 * event delivered twice; DynamoDB refusing 20% of the functions' calls with
 * each error AWS gives under pressure; and the crash.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: it is the matrix's cells listed one after another, each a short block.
export function chaosMatrix(): Cell[] {
  const cells: Cell[] = [{ name: 'baseline', description: 'no fault', faults: none, reasons: [] }];
  for (const state of SAGA_TASKS) {
    for (const rate of [0.1, 0.5]) {
      cells.push({
        name: `${state}-retryable-${percent(rate)}`,
        description: `${state} fails ${percent(rate)}% of attempts with TransientError${compensationNote(state)}`,
        faults: { ...none, steps: withCompensation(state, [{ state, rate, error: 'TransientError' }]) },
        // Five attempts all failing (rate⁵) exhausts the retries.
        reasons: [...EXHAUSTED[state], ...COMPENSATED_REASONS(state)],
      });
    }
    for (const rate of [0.1, 0.5]) {
      cells.push({
        name: `${state}-fatal-${percent(rate)}`,
        description: `${state} fails ${percent(rate)}% of attempts with StepFailed (non-retryable)${compensationNote(state)}`,
        faults: { ...none, steps: withCompensation(state, [{ state, rate, error: 'StepFailed' }]) },
        reasons: state === 'CancelOrder' ? COMPENSATED_REASONS(state) : ['STEP_FAILED'],
      });
    }
    cells.push({
      name: `${state}-late`,
      description: `30% of ${state}'s attempts start ${TASK_TIMEOUT_SECONDS + 2} s late, past its ${TASK_TIMEOUT_SECONDS} s timeout, and still run${compensationNote(state)}`,
      faults: {
        ...none,
        steps: withCompensation(state, [{ state, rate: 0.3, delayMs: (TASK_TIMEOUT_SECONDS + 2) * 1000 }]),
      },
      // Timeouts use up retries and time: the order's own deadline may pass.
      reasons: [...new Set([...EXHAUSTED[state], 'TIMEOUT', ...COMPENSATED_REASONS(state)])],
    });
  }
  cells.push({
    name: 'duplicates',
    description: 'every stream batch and every bus event delivered twice (every consumer twice)',
    faults: { ...none, duplicates: { streamRecords: 1, busEvents: 1 } },
    reasons: [],
  });
  for (const error of [
    'ProvisionedThroughputExceededException',
    'ThrottlingException',
    'TransactionConflict',
  ] as const) {
    cells.push({
      name: `dynamodb-${error === 'TransactionConflict' ? 'conflict' : error === 'ThrottlingException' ? 'throttling' : 'throughput'}-20`,
      description:
        error === 'TransactionConflict'
          ? `DynamoDB cancels 20% of the functions' transactions with a TransactionConflict`
          : `DynamoDB refuses 20% of the functions' calls with ${error}`,
      faults: { ...none, dynamodb: [{ error, rate: 0.2 }] },
      // A call refused past its client's retries fails its step's attempt; enough of them exhaust the retries.
      reasons: ['TIMEOUT', 'CONFIRMATION_FAILED', 'STEP_FAILED'],
    });
  }
  cells.push({
    name: 'dynamodb-lost-answer-20',
    description:
      "DynamoDB makes 20% of the functions' writes (single writes and transactions), then loses the answer: a 500 InternalServerError or a reset connection, which the functions' client retries",
    faults: { ...none, dynamodb: [{ kind: 'lost-answer', rate: 0.2 }] },
    // The retry finds the write made and goes on: no order is cancelled for it, and no client sees it.
    reasons: [],
    answersUnchanged: true,
  });
  cells.push({
    name: 'eventbridge-partial-20',
    description:
      'EventBridge refuses 20% of the entries of each PutEvents one by one (FailedEntryCount, ErrorCode InternalFailure): the outbox puts only those again',
    faults: { ...none, eventbridge: { entries: 0.2, calls: 0, entryError: 'InternalFailure' } },
    // The relay puts a refused entry again; one refused past its retries is the stream's to deliver again.
    reasons: [],
    answersUnchanged: true,
  });
  cells.push({
    name: 'eventbridge-throttled-20',
    description:
      "EventBridge refuses 20% of PutEvents calls whole with a ThrottlingException, which the relay's client retries",
    faults: { ...none, eventbridge: { entries: 0, calls: 0.2 } },
    reasons: [],
    answersUnchanged: true,
  });
  cells.push({
    name: 'duplicates-late',
    description:
      'every stream batch and bus event delivered twice, the copy 5 s late: after the batches and events that followed it (out of order)',
    faults: { ...none, duplicates: { streamRecords: 1, busEvents: 1, lateMs: 5_000 } },
    reasons: [],
    answersUnchanged: true,
  });
  cells.push({
    name: 'duplicates-minutes-late',
    description: `a quarter of the stream batches and bus events delivered again ${MINUTES_LATE_MS / 60_000} minutes late: after their orders are final, their reservations released or expired`,
    faults: { ...none, duplicates: { streamRecords: 0.25, busEvents: 0.25, lateMs: MINUTES_LATE_MS } },
    reasons: [],
    answersUnchanged: true,
  });
  for (const when of ['after-work', 'midway'] as const) {
    cells.push({
      name: `functions-die-${when}-20`,
      description:
        when === 'after-work'
          ? "20% of every function's invocations die after their work (every write made) and before their answer: Runtime.ExitError, the API's client answered 500 and resending with its key"
          : "20% of every function's invocations die at a random moment of their work (between writes, or in one): Runtime.ExitError, the API's client answered 500 and resending with its key",
      faults: { ...none, functions: [{ when, rate: 0.2 }] },
      // A step's five attempts all dying (0.2⁵) exhaust its retries.
      reasons: ['TIMEOUT', 'CONFIRMATION_FAILED'],
    });
  }
  cells.push({
    name: 'lost-answers-and-step-failures',
    description:
      "two faults at once: DynamoDB loses the answer to 20% of the functions' writes, and CapturePayment fails 30% of its attempts with TransientError",
    faults: {
      ...none,
      dynamodb: [{ kind: 'lost-answer', rate: 0.2 }],
      steps: [{ state: 'CapturePayment', rate: 0.3, error: 'TransientError' }],
    },
    // Five failed attempts of CapturePayment (0.3⁵) exhaust its retries.
    reasons: ['TIMEOUT'],
    answersUnchanged: true,
  });
  cells.push({
    name: 'poison-record',
    description:
      "one record of the inventory table's stream is poison: the projector fails on it every time, until the mapping gives it up to its on-failure destination; then the redrive",
    faults: {
      ...none,
      deliveries: { poisonRecords: 1, poisonFunction: 'InventoryProjector', failingTargets: 0 },
    },
    reasons: [],
    answersUnchanged: true,
    deadLetters: 'expected',
  });
  cells.push({
    name: 'target-failing',
    description:
      "the saga's OrderPlaced rule's target fails every attempt, until its dead-letter queue; then the redrive",
    faults: {
      ...none,
      deliveries: { poisonRecords: 0, failingTargets: 1, failingRule: 'SagaStartOnOrderPlaced' },
    },
    reasons: [],
    answersUnchanged: true,
    deadLetters: 'expected',
  });
  cells.push({
    name: 'crash',
    description:
      'the local cloud killed with SIGKILL (its whole process group) halfway through, then started again on its data',
    faults: { ...none, crash: true },
    // Sagas cut off by the crash are ended by the sweeper after their deadline.
    reasons: ['TIMEOUT'],
  });
  return cells;
}

/** The cells `--cells a,b` names (each a cell's name or a prefix of names, e.g. `CapturePayment`). */
export function selectCells(cells: readonly Cell[], names: string | undefined): Cell[] {
  if (!names?.trim()) return [...cells];
  const wanted = names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const chosen = cells.filter((cell) => wanted.some((w) => cell.name === w || cell.name.startsWith(`${w}-`)));
  const unknown = wanted.filter((w) => !cells.some((c) => c.name === w || c.name.startsWith(`${w}-`)));
  if (unknown.length > 0)
    throw new Error(`no cell ${unknown.join(', ')}; cells: ${cells.map((c) => c.name).join(', ')}`);
  return chosen;
}
