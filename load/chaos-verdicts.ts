/**
 * The verdicts of `npm run chaos`, pure: which of a cell's faults explains
 * each dead letter, whether the cell's observations pass (`judgeCell`), and
 * the matrix's table in the report. The cells are chaos-matrix.ts.
 */
import { type Cell, type CellFaults, type DynamoRefusal, LOAD_REASONS, percent } from './chaos-matrix';

/** A dead-letter message as the local cloud keeps it (`GET /_local/dead-letters`). */
export interface DeadLetter {
  readonly queue: string;
  readonly messageId: string;
  readonly body: string;
}

export interface ExplainedDeadLetter {
  readonly queue: string;
  readonly messageId: string;
  /** Where it came from: a stream mapping's on-failure destination or a rule target's dead-letter queue. */
  readonly source: 'stream' | 'rule' | 'unknown';
  /** What failed, as the message says it. */
  readonly cause: string;
  /** The cell's fault that explains it; absent: unexplained, and the cell fails. */
  readonly explainedBy?: string;
}

/** The names of a DynamoDB refusal as the SDK reports it (the error's name, or a cancellation's reason). */
const DYNAMO_SIGNS: Readonly<Record<DynamoRefusal['error'], readonly string[]>> = {
  ProvisionedThroughputExceededException: ['ProvisionedThroughputExceeded'],
  ThrottlingException: ['ThrottlingException', 'Rate of requests exceeds'],
  TransactionConflict: ['TransactionConflict', 'TransactionCanceled', 'Transaction is ongoing'],
};

/** What a refused PutEvents leaves in a message (the relay's error, the SDK's). */
const BUS_SIGNS = ['ThrottlingException', 'InternalFailure', 'Rate exceeded', 'events not published'];

/** What an invocation killed with its sandbox leaves in a message: Lambda's error for a runtime that exited. */
const DEATH_SIGNS = ['Runtime.ExitError', 'Runtime exited'];

/** What a crash leaves in a message: connections refused or cut while the cloud was down. */
const CRASH_SIGNS = ['ECONNREFUSED', 'ECONNRESET', 'socket hang up', 'EPIPE', 'sandbox', 'terminated'];

/**
 * Classifies a dead-letter message by its cause and matches it to the
 * cell's fault. A stream batch given up carries the last error the local
 * mapping saw (`localLastError`, which Lambda's record does not have);
 * a rule target's carries the error of its last attempt.
 */
export function explainDeadLetter(letter: DeadLetter, faults: CellFaults): ExplainedDeadLetter {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(letter.body) as Record<string, unknown>;
  } catch {
    // Not JSON: unexplained.
  }
  const source = body.DDBStreamBatchInfo ? 'stream' : body.rule ? 'rule' : 'unknown';
  const cause = String(
    source === 'stream'
      ? ((body.responseContext as { localLastError?: string } | undefined)?.localLastError ??
          (body.requestContext as { condition?: string } | undefined)?.condition ??
          '')
      : (body.error ?? ''),
  );
  const base = { queue: letter.queue, messageId: letter.messageId, source, cause } as const;
  for (const fault of faults.dynamodb) {
    // A lost answer explains no dead letter: its retry finds the write made.
    if ('kind' in fault) continue;
    if (DYNAMO_SIGNS[fault.error].some((sign) => cause.includes(sign)))
      return { ...base, explainedBy: `DynamoDB ${fault.error} ${percent(fault.rate)}%` };
  }
  if (faults.deliveries.poisonRecords > 0 && cause.includes('PoisonRecord'))
    return { ...base, explainedBy: `${faults.deliveries.poisonRecords} poison record(s)` };
  if (faults.deliveries.failingTargets > 0 && cause.includes('TargetFailing'))
    return { ...base, explainedBy: `${faults.deliveries.failingRule ?? 'every'} rule's target failing` };
  const bus = faults.eventbridge;
  if ((bus.entries > 0 || bus.calls > 0) && BUS_SIGNS.some((sign) => cause.includes(sign)))
    return {
      ...base,
      explainedBy: `EventBridge refusing ${percent(bus.entries)}% of entries, ${percent(bus.calls)}% of calls`,
    };
  for (const fault of faults.steps) {
    if (cause.includes(fault.state) || (fault.error && cause.includes(fault.error)))
      return { ...base, explainedBy: `${fault.state} fault` };
  }
  if (faults.functions.length > 0 && DEATH_SIGNS.some((sign) => cause.includes(sign)))
    return {
      ...base,
      explainedBy: `functions dying ${faults.functions.map((f) => `${f.when} ${percent(f.rate)}%`).join(', ')}`,
    };
  if (faults.crash && CRASH_SIGNS.some((sign) => cause.includes(sign)))
    return { ...base, explainedBy: 'the crash' };
  return base;
}

/**
 * The answers a fault changed, from the load's unexpected answers by kind
 * (`place_order 500`, `reserve_stock 429`, or a network error such as
 * `errors.ETIMEDOUT`): a 5xx, a 429 or no answer. The 4xx a run without the
 * fault gives (409 INSUFFICIENT_STOCK on a scarce product, 402, 404) are
 * the answers the client would have had, and pass.
 */
export function answersTheFaultChanged(levels: readonly Readonly<Record<string, number>>[]): string[] {
  const changed = new Map<string, number>();
  for (const byKind of levels) {
    for (const [kind, n] of Object.entries(byKind)) {
      const status = /^\S+ (\d{3})$/.exec(kind)?.[1];
      if (status === undefined || status === '429' || status.startsWith('5'))
        changed.set(kind, (changed.get(kind) ?? 0) + n);
    }
  }
  return [...changed].map(([kind, n]) => `${n} answer(s) the fault changed: ${kind}`);
}

/** What the runner saw of one cell. */
export interface CellObservation {
  readonly orders: number;
  /** Final outcomes: `CONFIRMED`, or `CANCELLED <reason>`. */
  readonly outcomes: Readonly<Record<string, number>>;
  /** Broken invariants of the load report (one line each), and the run's own failures. */
  readonly failures: readonly string[];
  /** Orders whose customer's account holds more than one capture, or a capture refunded twice. */
  readonly chargedTwice: readonly string[];
  /** Effects in the event stores that no request of the run caused (load/audit.ts). */
  readonly withoutCause: readonly string[];
  readonly deadLetters: readonly ExplainedDeadLetter[];
  readonly retries: number;
  readonly taskFailures: number;
  /** The faults the cell injected, as the local cloud counted them (absent for a cell that did not run). */
  readonly injected?: Injected;
  /** The redrive after the fault was lifted: messages delivered, and those left (each with why). */
  readonly redrive?: { readonly redriven: number; readonly left: readonly string[] };
}

/** What a cell's faults did, counted by the local cloud. */
export interface Injected {
  readonly dynamodbRefused: number;
  readonly lostAnswers: number;
  readonly busEntriesRefused: number;
  readonly busCallsRefused: number;
  readonly poisonRecords: number;
  readonly failedTargetAttempts: number;
  /** Saga Task attempts that failed (a step fault's, or anything else's). */
  readonly stepFailures: number;
  /** Stream batches and bus deliveries made twice. */
  readonly duplicated: number;
  /** Invocations killed with their sandbox (after their work, or midway). */
  readonly functionDeaths: number;
}

/** The faults injected, as a table cell: each kind that happened, with its count. */
export function injectedText(injected: Injected | undefined): string {
  if (!injected) return 'n/a';
  const parts = [
    ['DynamoDB refusals', injected.dynamodbRefused],
    ['lost answers', injected.lostAnswers],
    ['bus entries refused', injected.busEntriesRefused],
    ['PutEvents calls refused', injected.busCallsRefused],
    ['poison records', injected.poisonRecords],
    ['target attempts failed', injected.failedTargetAttempts],
    ['step failures', injected.stepFailures],
    ['duplicate deliveries', injected.duplicated],
    ['invocations killed', injected.functionDeaths],
  ] as const;
  const made = parts.filter(([, n]) => n > 0).map(([what, n]) => `${what} ${n}`);
  return made.length === 0 ? '0' : made.join(', ');
}

export interface CellResult extends CellObservation {
  readonly cell: string;
  readonly ok: boolean;
  /** Why the cell failed (empty when it passed). */
  readonly problems: readonly string[];
}

/**
 * A cell passes when the load report's invariants hold, no order was
 * charged twice, no effect is without its cause, every dead letter is explained by the cell's fault and
 * redriven, every
 * cancellation has a reason the load or the fault explains, and orders were
 * placed at all.
 */
export function judgeCell(cell: Cell, seen: CellObservation): CellResult {
  const problems = [...seen.failures];
  if (seen.orders === 0) problems.push('no order was placed');
  for (const order of seen.chargedTwice) problems.push(`charged twice: ${order}`);
  for (const effect of seen.withoutCause) problems.push(`an effect without its cause: ${effect}`);
  for (const letter of seen.deadLetters) {
    if (!letter.explainedBy)
      problems.push(
        `unexplained dead letter in ${letter.queue} (${letter.source}): ${letter.cause || 'no cause'}`,
      );
  }
  if (cell.deadLetters === 'expected' && seen.orders > 0 && seen.deadLetters.length === 0)
    problems.push('the fault made no dead letter');
  // Every dead letter, expected or not, is delivered again by the redrive before the invariants are read.
  if (seen.deadLetters.length > 0 || (cell.deadLetters === 'expected' && seen.orders > 0)) {
    if (!seen.redrive) problems.push('no redrive ran');
    for (const left of seen.redrive?.left ?? []) problems.push(`dead letter not redriven: ${left}`);
  }
  const allowed = new Set<string>([...LOAD_REASONS, ...cell.reasons]);
  for (const [outcome, count] of Object.entries(seen.outcomes)) {
    const reason = /^CANCELLED (.+)$/.exec(outcome)?.[1];
    if (reason && !allowed.has(reason))
      problems.push(`${count} order(s) ${outcome}: a reason this cell's fault does not explain`);
  }
  return { ...seen, cell: cell.name, ok: problems.length === 0, problems };
}

const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

/** `CANCELLED` outcomes as `REASON n` pairs, most first. */
export function cancelledByReason(outcomes: Readonly<Record<string, number>>): string {
  const cancelled = Object.entries(outcomes)
    .flatMap(([outcome, n]) => {
      const reason = /^CANCELLED(?: (.+))?$/.exec(outcome);
      return reason ? [[reason[1] ?? '(none)', n] as const] : [];
    })
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return cancelled.length === 0 ? '0' : cancelled.map(([reason, n]) => `${reason} ${n}`).join(', ');
}

/** The matrix as a Markdown table: one row per cell. */
export function matrixTable(cells: readonly Cell[], results: readonly CellResult[]): string {
  const rows = results.map((r) => {
    const cell = cells.find((c) => c.name === r.cell);
    const explained = r.deadLetters.filter((d) => d.explainedBy).length;
    return [
      `\`${r.cell}\``,
      cell?.description ?? '',
      String(r.orders),
      String(r.outcomes.CONFIRMED ?? 0),
      cancelledByReason(r.outcomes),
      injectedText(r.injected),
      String(r.retries),
      (r.deadLetters.length === 0 ? '0' : `${r.deadLetters.length} (${explained} explained)`) +
        (r.redrive ? `, ${r.redrive.redriven} redriven` : ''),
      r.ok ? 'pass' : `**FAIL**: ${r.problems.slice(0, 3).join('; ')}${r.problems.length > 3 ? '; …' : ''}`,
    ];
  });
  return table(
    [
      'cell',
      'fault',
      'orders',
      'confirmed',
      'cancelled by reason',
      'faults injected',
      'retries',
      'DLQ',
      'result',
    ],
    rows,
  );
}
