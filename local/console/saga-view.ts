import type { LogLine } from '../logs';
import type { ConsoleExecution, ExecutionStatus, TaskInvocation } from '../stepfunctions';
import type { AslDefinition } from '../stepfunctions/definitions';

/**
 * What the saga console shows, computed from what the local Step Functions
 * already keeps (the ASL, each execution's summary and history) when the page
 * asks for it: pure functions, no I/O, nothing done per execution otherwise.
 */

/** What happened to a state in one execution, as the console colours it. */
export type StateOutcome = 'succeeded' | 'failed' | 'compensated' | 'not-reached' | 'running';

/** How a state leads to another: `catch` edges are the ones taken on an error. */
export type EdgeKind = 'next' | 'choice' | 'default' | 'catch';

export interface GraphNode {
  readonly name: string;
  readonly type: string;
  readonly comment?: string;
  /** Reachable from StartAt only through a Catch: the saga's compensation path. */
  readonly compensation: boolean;
  readonly layer: number;
  readonly x: number;
  readonly y: number;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  /** The errors a Catch edge takes, or the condition a Choice edge tests. */
  readonly label?: string;
}

export interface StateGraph {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
  readonly width: number;
  readonly height: number;
  readonly nodeWidth: number;
  readonly nodeHeight: number;
}

export const NODE_WIDTH = 160;
export const NODE_HEIGHT = 44;
const COLUMN_GAP = 24;
const LAYER_GAP = 36;
const MARGIN = 16;

/** The transitions a state declares, in the order the ASL lists them. */
export function edgesOf(name: string, state: AslDefinition['States'][string]): GraphEdge[] {
  const edges: GraphEdge[] = [];
  const choices = Array.isArray(state.Choices) ? (state.Choices as Record<string, unknown>[]) : [];
  for (const choice of choices) {
    if (typeof choice.Next === 'string') {
      edges.push({ from: name, to: choice.Next, kind: 'choice', label: choiceLabel(choice) });
    }
  }
  if (typeof state.Default === 'string') edges.push({ from: name, to: state.Default, kind: 'default' });
  if (typeof state.Next === 'string') edges.push({ from: name, to: state.Next, kind: 'next' });
  const catchers = Array.isArray(state.Catch) ? (state.Catch as Record<string, unknown>[]) : [];
  for (const catcher of catchers) {
    if (typeof catcher.Next === 'string') {
      const errors = Array.isArray(catcher.ErrorEquals) ? catcher.ErrorEquals.join(', ') : '';
      edges.push({ from: name, to: catcher.Next, kind: 'catch', label: errors });
    }
  }
  return edges;
}

function choiceLabel(choice: Record<string, unknown>): string {
  const variable = typeof choice.Variable === 'string' ? choice.Variable : '';
  const test = Object.entries(choice).find(([key]) => key !== 'Variable' && key !== 'Next');
  return test ? `${variable} ${test[0]} ${JSON.stringify(test[1])}`.trim() : variable;
}

/**
 * Lays the top-level states out in layers from StartAt: a state's layer is
 * the longest path to it (back edges of a loop ignored), so every transition
 * goes down. In a layer the main path comes first and the compensation path
 * in columns of its own on the right; states are ordered by where their
 * predecessors stand, then as the ASL reaches them.
 */
export function stateGraph(definition: AslDefinition): StateGraph {
  const names = Object.keys(definition.States);
  const edges = names.flatMap((name) =>
    edgesOf(name, definition.States[name]!).filter((e) => e.to in definition.States),
  );
  const outgoing = new Map(names.map((n) => [n, edges.filter((e) => e.from === n)]));

  // The order the ASL reaches its states in, breadth first, and which are reached without a Catch.
  const discovery = new Map<string, number>();
  const reach = (withCatch: boolean) => {
    const seen = new Set<string>([definition.StartAt]);
    const queue = [definition.StartAt];
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (withCatch && !discovery.has(name)) discovery.set(name, discovery.size);
      for (const edge of outgoing.get(name) ?? []) {
        if ((withCatch || edge.kind !== 'catch') && !seen.has(edge.to)) {
          seen.add(edge.to);
          queue.push(edge.to);
        }
      }
    }
    return seen;
  };
  const mainPath = reach(false);
  reach(true);
  for (const name of names) if (!discovery.has(name)) discovery.set(name, discovery.size);

  // Back edges (to a state on the current depth-first path) close loops; the layering ignores them.
  const backEdges = new Set<GraphEdge>();
  const state = new Map<string, 'open' | 'done'>();
  const visit = (name: string) => {
    state.set(name, 'open');
    for (const edge of outgoing.get(name) ?? []) {
      const seen = state.get(edge.to);
      if (seen === 'open') backEdges.add(edge);
      else if (seen === undefined) visit(edge.to);
    }
    state.set(name, 'done');
  };
  for (const name of [definition.StartAt, ...names]) if (!state.has(name)) visit(name);

  const forward = edges.filter((e) => !backEdges.has(e));
  const layer = new Map(names.map((n) => [n, 0]));
  // Longest path: relax in topological order (Kahn's algorithm over the forward edges).
  const indegree = new Map(names.map((n) => [n, forward.filter((e) => e.to === n).length]));
  const ready = names.filter((n) => indegree.get(n) === 0);
  while (ready.length > 0) {
    const name = ready.shift()!;
    for (const edge of forward.filter((e) => e.from === name)) {
      layer.set(edge.to, Math.max(layer.get(edge.to)!, layer.get(name)! + 1));
      indegree.set(edge.to, indegree.get(edge.to)! - 1);
      if (indegree.get(edge.to) === 0) ready.push(edge.to);
    }
  }

  const layers: string[][] = Array.from({ length: Math.max(...layer.values()) + 1 }, () => []);
  for (const name of names) layers[layer.get(name)!]!.push(name);
  const column = new Map<string, number>();
  const ordered: string[][] = [];
  for (const members of layers) {
    const row = [...members];
    const centre = (name: string) => {
      const from = forward.filter((e) => e.to === name && column.has(e.from)).map((e) => column.get(e.from)!);
      return from.length === 0 ? 0 : from.reduce((a, b) => a + b, 0) / from.length;
    };
    row.sort((a, b) => centre(a) - centre(b) || discovery.get(a)! - discovery.get(b)!);
    row.forEach((name, i) => {
      column.set(name, i);
    });
    ordered.push(row);
  }
  // The compensation path gets the columns right of the widest main-path layer.
  const mainColumns = Math.max(1, ...ordered.map((row) => row.filter((n) => mainPath.has(n)).length));
  const nodes: GraphNode[] = [];
  ordered.forEach((row, depth) => {
    const main = row.filter((n) => mainPath.has(n));
    const compensation = row.filter((n) => !mainPath.has(n));
    const place = (name: string, slot: number) => {
      const s = definition.States[name]!;
      nodes.push({
        name,
        type: s.Type,
        ...(typeof s.Comment === 'string' ? { comment: s.Comment } : {}),
        compensation: !mainPath.has(name),
        layer: depth,
        x: MARGIN + slot * (NODE_WIDTH + COLUMN_GAP),
        y: MARGIN + depth * (NODE_HEIGHT + LAYER_GAP),
      });
    };
    main.forEach((name, i) => {
      place(name, i);
    });
    compensation.forEach((name, i) => {
      place(name, mainColumns + i);
    });
  });
  const width = Math.max(...nodes.map((n) => n.x)) + NODE_WIDTH + MARGIN;
  const height = Math.max(...nodes.map((n) => n.y)) + NODE_HEIGHT + MARGIN;
  return { nodes, edges, width, height, nodeWidth: NODE_WIDTH, nodeHeight: NODE_HEIGHT };
}

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

const parse = (json: string | undefined): unknown => {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
};
const field = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined),
    value,
  );

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

const shorten = (value: string, max = 120) => (value.length > max ? `${value.slice(0, max - 1)}…` : value);

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

/** A JSON text indented for reading; a text that is not JSON as it is. */
export function prettyJson(json: string | undefined): string {
  if (json === undefined) return '';
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

/**
 * What a log line says in one line: its message (Powertools'), or for an EMF
 * document the metrics it emits with their values, or else the line itself.
 */
export function logLineSummary(line: Pick<LogLine, 'message' | 'fields' | 'text'>): string {
  if (line.message !== undefined) return line.message;
  const directives = field(line.fields, '_aws', 'CloudWatchMetrics');
  if (Array.isArray(directives)) {
    const names = directives.flatMap((d) => {
      const metrics = field(d, 'Metrics');
      return Array.isArray(metrics) ? metrics.map((m) => field(m, 'Name')) : [];
    });
    const values = names
      .filter((n): n is string => typeof n === 'string')
      .map((n) => `${n}=${JSON.stringify(line.fields?.[n])}`);
    if (values.length > 0) return `metrics ${values.join(', ')}`;
  }
  return shorten(line.text, 200);
}

const JSON_FIELDS = new Set(['input', 'output', 'parameters', 'cause']);

/**
 * An event's details for reading: the JSON texts Step Functions records as
 * strings (`input`, `output`, `parameters`, a `cause` that is JSON) parsed, so
 * that they indent with the rest.
 */
export function readableDetails(details: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(details).map(([key, value]) => {
      if (!JSON_FIELDS.has(key) || typeof value !== 'string') return [key, value];
      const parsed = parse(value);
      return [key, parsed === undefined ? value : parsed];
    }),
  );
}
