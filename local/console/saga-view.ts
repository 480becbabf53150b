import type { ConsoleExecution, ExecutionStatus, TaskInvocation } from '../stepfunctions';
import type { StateGraph, StateOutcome } from './saga-graph';

export { logLineSummary, prettyJson, readableDetails } from './saga-text';

import { field, parse, shorten } from './saga-text';

/**
 * What the saga console shows, computed from what the local Step Functions
 * already keeps (the ASL, each execution's summary and history) when the page
 * asks for it: pure functions, no I/O, nothing done per execution otherwise.
 * The state machine's graph is saga-graph.ts; how JSON, log lines and
 * details are written for reading is saga-text.ts.
 */

export {
  type EdgeKind,
  edgesOf,
  type GraphEdge,
  type GraphNode,
  NODE_HEIGHT,
  NODE_WIDTH,
  type StateGraph,
  type StateOutcome,
  stateGraph,
} from './saga-graph';

/** The history events the console reads (AWS's shape, as the local Step Functions records it). */
export interface HistoryEventLike {
  readonly id?: number;
  readonly type: string;
  /** Epoch seconds. */
  readonly timestamp: number;
  readonly [details: string]: unknown;
}

export interface Attempt {
  readonly number: number;
  readonly startedAt: number;
  /** The function this attempt invoked and the invocation's request id: its log lines carry it. */
  readonly functionName?: string;
  readonly requestId?: string;
  endedAt?: number;
  outcome: 'running' | 'succeeded' | 'failed' | 'timed-out';
  error?: string;
  cause?: string;
  input?: string;
  output?: string;
}

export interface StateResult {
  readonly name: string;
  outcome: StateOutcome;
  /** How many times the execution entered the state; the rest describes the last time. */
  visits: number;
  enteredAt?: number;
  exitedAt?: number;
  input?: string;
  output?: string;
  error?: { error: string; cause?: string };
  attempts: Attempt[];
}

const detailsOf = (event: HistoryEventLike): Record<string, unknown> => {
  const key = Object.keys(event).find((k) => k.endsWith('EventDetails'));
  return key ? ((event[key] as Record<string, unknown> | undefined) ?? {}) : {};
};
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * Reads one execution's history into a result per state of the graph: not
 * reached, running, succeeded, failed (its last attempt failed, or the
 * execution ended in it) or compensated (a state of the compensation path
 * that completed), with its attempts (each Task retry is another), timings
 * (epoch milliseconds), last input, output and error; an attempt that invoked
 * a function names it and its request id (`invocations`, by the id of the
 * attempt's scheduled event).
 */
export function stateResults(
  graph: StateGraph,
  status: ExecutionStatus,
  history: readonly HistoryEventLike[],
  invocations: ReadonlyMap<number, TaskInvocation> = new Map(),
): Record<string, StateResult> {
  const results: Record<string, StateResult> = {};
  const compensation = new Set(graph.nodes.filter((n) => n.compensation).map((n) => n.name));
  for (const node of graph.nodes) {
    results[node.name] = { name: node.name, outcome: 'not-reached', visits: 0, attempts: [] };
  }
  let open: StateResult | undefined;
  let attempt: Attempt | undefined;
  for (const event of history) {
    const ms = event.timestamp * 1000;
    const details = detailsOf(event);
    if (event.type.endsWith('StateEntered')) {
      const name = text(details.name) ?? '';
      const result = results[name] ?? { name, outcome: 'not-reached', visits: 0, attempts: [] };
      results[name] = result;
      result.visits++;
      result.outcome = 'running';
      result.enteredAt = ms;
      result.attempts = [];
      delete result.exitedAt;
      delete result.output;
      delete result.error;
      const input = text(details.input);
      if (input !== undefined) result.input = input;
      open = result;
      attempt = undefined;
    } else if (event.type.endsWith('StateExited')) {
      const name = text(details.name) ?? '';
      const result = results[name];
      if (!result) continue;
      result.exitedAt = ms;
      const output = text(details.output);
      if (output !== undefined) result.output = output;
      const lastAttempt = result.attempts.at(-1);
      result.outcome =
        lastAttempt && lastAttempt.outcome !== 'succeeded'
          ? 'failed'
          : compensation.has(name)
            ? 'compensated'
            : 'succeeded';
      if (open === result) open = undefined;
    } else if (event.type === 'TaskScheduled' || event.type === 'LambdaFunctionScheduled') {
      if (!open) continue;
      const invocation = event.id === undefined ? undefined : invocations.get(event.id);
      attempt = {
        number: open.attempts.length + 1,
        startedAt: ms,
        outcome: 'running',
        ...invocation,
        ...(text(details.parameters ?? details.input) === undefined
          ? {}
          : { input: text(details.parameters ?? details.input)! }),
      };
      open.attempts.push(attempt);
    } else if (/^(Task|LambdaFunction)(Succeeded|Failed|TimedOut)$/.test(event.type)) {
      if (!open || !attempt) continue;
      attempt.endedAt = ms;
      if (event.type.endsWith('Succeeded')) {
        attempt.outcome = 'succeeded';
        const output = text(details.output);
        if (output !== undefined) attempt.output = output;
        delete open.error;
      } else {
        attempt.outcome = event.type.endsWith('TimedOut') ? 'timed-out' : 'failed';
        const error = text(details.error) ?? 'States.TaskFailed';
        const cause = text(details.cause);
        attempt.error = error;
        if (cause !== undefined) attempt.cause = cause;
        open.error = { error, ...(cause === undefined ? {} : { cause }) };
      }
      attempt = undefined;
    } else if (/^Execution(Failed|TimedOut|Aborted)$/.test(event.type)) {
      if (!open) continue;
      open.outcome = 'failed';
      const error = text(details.error);
      if (error !== undefined)
        open.error = { error, ...(text(details.cause) ? { cause: text(details.cause)! } : {}) };
      open = undefined;
    }
  }
  // An execution that ended without closing a state (stopped, or failed outside the history) failed in it.
  if (status !== 'RUNNING') {
    for (const result of Object.values(results)) if (result.outcome === 'running') result.outcome = 'failed';
  }
  return results;
}

/** An execution as the local Step Functions keeps it (the fields the console reads). */
export type ExecutionLike = Pick<
  ConsoleExecution,
  | 'executionArn'
  | 'name'
  | 'status'
  | 'startDate'
  | 'stopDate'
  | 'input'
  | 'output'
  | 'error'
  | 'cause'
  | 'lastState'
>;

/** The console's status: a saga that ended on its compensation path is COMPENSATED, not SUCCEEDED. */
export type ConsoleStatus = ExecutionStatus | 'COMPENSATED';

const compensationStates = new WeakMap<StateGraph, ReadonlySet<string>>();

export function consoleStatus(execution: ExecutionLike, graph: StateGraph): ConsoleStatus {
  if (execution.status !== 'SUCCEEDED' || execution.lastState === undefined) return execution.status;
  let compensation = compensationStates.get(graph);
  if (!compensation) {
    compensation = new Set(graph.nodes.filter((n) => n.compensation).map((n) => n.name));
    compensationStates.set(graph, compensation);
  }
  return compensation.has(execution.lastState) ? 'COMPENSATED' : 'SUCCEEDED';
}

export interface ExecutionRow {
  readonly executionArn: string;
  readonly name: string;
  readonly status: ConsoleStatus;
  readonly orderId?: string;
  readonly startDate: number;
  readonly stopDate?: number;
  readonly durationMs?: number;
  /** Why the order was cancelled (the saga's `cancellation.reason`), or the error a failed execution ended with. */
  readonly reason?: string;
  /** The last state entered (where a duplicate execution stopped, say). */
  readonly endState?: string;
}

/**
 * One line of the list. The order id is the one the saga's input carries (an
 * OrderPlaced event, or a bare `{orderId}`); the execution's name otherwise.
 */
export function executionRow(execution: ExecutionLike, graph: StateGraph, now = Date.now()): ExecutionRow {
  const input = parse(execution.input);
  const orderId = field(input, 'detail', 'data', 'orderId') ?? field(input, 'orderId');
  const reason = field(parse(execution.output), 'cancellation', 'reason') ?? execution.error;
  const end = execution.stopDate ?? (execution.status === 'RUNNING' ? now : undefined);
  return {
    executionArn: execution.executionArn,
    name: execution.name,
    status: consoleStatus(execution, graph),
    ...(typeof orderId === 'string' ? { orderId } : {}),
    startDate: execution.startDate,
    ...(execution.stopDate === undefined ? {} : { stopDate: execution.stopDate }),
    ...(end === undefined ? {} : { durationMs: end - execution.startDate }),
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(execution.lastState === undefined ? {} : { endState: execution.lastState }),
  };
}

/**
 * What the list's text filter searches in an execution, in lower case: its
 * name, order id, customer id and cancellation reason (or error).
 */
export function searchKey(execution: ExecutionLike): string {
  const input = parse(execution.input);
  const data = field(input, 'detail', 'data') ?? input;
  const reason = field(parse(execution.output), 'cancellation', 'reason') ?? execution.error;
  return [execution.name, field(data, 'orderId'), field(data, 'customerId'), reason]
    .filter((v) => typeof v === 'string')
    .join('\n')
    .toLowerCase();
}

/**
 * The list's filter: a status (the console's) and a text, whatever its case,
 * found in an execution's search key. `keyOf` lets the caller keep each
 * finished execution's key once computed: the filter runs over every execution
 * kept at every poll of an open page.
 */
export function executionFilter(
  filter: { status?: string; text?: string },
  keyOf: (execution: ExecutionLike) => string = searchKey,
): (execution: ExecutionLike, graph: StateGraph) => boolean {
  const needle = filter.text?.toLowerCase();
  return (execution, graph) => {
    if (filter.status && consoleStatus(execution, graph) !== filter.status) return false;
    return !needle || keyOf(execution).includes(needle);
  };
}

/** The correlation id an execution's input carries (an OrderPlaced event's `detail.correlationId`, or a bare one). */
export function correlationIdOf(input: string | undefined): string | undefined {
  const parsed = parse(input);
  const id = field(parsed, 'detail', 'correlationId') ?? field(parsed, 'correlationId');
  return typeof id === 'string' ? id : undefined;
}

/** One event of the history as the console's table shows it. */
export interface HistoryRow {
  readonly id: number;
  readonly type: string;
  /** Epoch ms. */
  readonly timestamp: number;
  /** Since the execution started. */
  readonly elapsedMs: number;
  /** The state the event belongs to: the one it enters or leaves, or the one whose Task it runs. */
  readonly state?: string;
  /** What a row says of the event in a few words: the resource a Task calls, an error. */
  readonly summary: string;
  /** The event's `…EventDetails`, as Step Functions records them. */
  readonly details?: Record<string, unknown>;
  /** For a Task attempt that invoked a function: which, and the invocation's request id. */
  readonly functionName?: string;
  readonly requestId?: string;
}

/** The few words a history row says of an event beside its type and state. */
export function eventSummary(event: HistoryEventLike): string {
  const details = detailsOf(event);
  const error = text(details.error);
  const cause = text(details.cause);
  if (error !== undefined || cause !== undefined) {
    return shorten([error, cause].filter((v) => v !== undefined).join(': '));
  }
  const resourceType = text(details.resourceType);
  const resource = text(details.resource);
  if (resourceType !== undefined && resource !== undefined) {
    if (resourceType === 'lambda' && resource === 'invoke') {
      const functionName = field(parse(text(details.parameters)), 'FunctionName');
      if (typeof functionName === 'string') return `lambda:invoke ${functionName.split(':').at(-1)}`;
    }
    return `${resourceType}:${resource}`;
  }
  if (resource !== undefined) return resource.split(':').at(-1) ?? resource;
  return '';
}

/**
 * The execution's history as Step Functions records it (GetExecutionHistory's
 * events, oldest first), one row per event: its id, type, time and time since
 * the execution started, the state it belongs to, its details, and for a Task
 * attempt that invoked a function, the invocation (`invocations`, by the id of
 * the attempt's scheduled event) whose log lines the console can show.
 */
export function historyRows(
  history: readonly HistoryEventLike[],
  startDate: number,
  invocations: ReadonlyMap<number, TaskInvocation> = new Map(),
): HistoryRow[] {
  let state: string | undefined;
  return history.map((event, index) => {
    const details = detailsOf(event);
    const id = event.id ?? index + 1;
    const named = event.type.endsWith('StateEntered') || event.type.endsWith('StateExited');
    if (named) state = text(details.name) ?? state;
    const belongsTo = named || /^(Task|LambdaFunction)/.test(event.type) ? state : undefined;
    const invocation = invocations.get(id);
    const timestamp = event.timestamp * 1000;
    const row: HistoryRow = {
      id,
      type: event.type,
      timestamp,
      elapsedMs: Math.max(0, timestamp - startDate),
      ...(belongsTo === undefined ? {} : { state: belongsTo }),
      summary: eventSummary(event),
      ...(Object.keys(details).length === 0 ? {} : { details }),
      ...invocation,
    };
    if (event.type.endsWith('StateExited')) state = undefined;
    return row;
  });
}
