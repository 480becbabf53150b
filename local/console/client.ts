// Longer than 400 lines because it is the console page's one script: its views (the list, the graph,
// the history, the logs) share the page's state (the selection, the open blocks) and its DOM helpers;
// splitting it by view means passing that state around, not yet done.
// The saga console's page script (bundled by esbuild when the page is first asked for).
// It polls while the page is visible: the list every 2 s, the chosen execution every second while it runs.
import type { LogLine } from '../logs';
import {
  type Attempt,
  type ConsoleStatus,
  type ExecutionRow,
  type GraphNode,
  type HistoryRow,
  logLineSummary,
  prettyJson,
  readableDetails,
  type StateGraph,
  type StateResult,
} from './saga-view';

interface ListAnswer {
  executions: (ExecutionRow & { machine: string })[];
  matched: number;
  total: number;
  running: number;
  deadLetters: Record<string, number>;
}

interface DetailAnswer {
  execution: ExecutionRow & {
    machine: string;
    input: string;
    output?: string;
    error?: string;
    cause?: string;
    correlationId?: string;
    historyKept: boolean;
    logsKept: boolean;
  };
  graph: StateGraph;
  states: Record<string, StateResult>;
  history: HistoryRow[];
}

interface LogsAnswer {
  lines: LogLine[];
  truncated: boolean;
}

const API = '/_local/console/api';
const LOGS = '/_local/logs';
const SVG = 'http://www.w3.org/2000/svg';

let selectedArn: string | undefined = decodeURIComponent(location.hash.slice(1)) || undefined;
let selectedState: string | undefined;
let detail: DetailAnswer | undefined;

const $ = <T extends Element>(selector: string) => document.querySelector<T>(selector)!;

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

function svg(tag: string, attributes: Record<string, string | number>, ...children: (Node | string)[]) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  node.append(...children);
  return node;
}

const time = (ms: number) => new Date(ms).toLocaleTimeString([], { hour12: false });
const duration = (ms: number | undefined) =>
  ms === undefined
    ? ''
    : ms < 1000
      ? `${Math.round(ms)} ms`
      : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

const pretty = prettyJson;
/** A time of day to the millisecond, for the history and the log lines. */
const preciseTime = (ms: number) => `${time(ms)}.${String(Math.floor(ms) % 1000).padStart(3, '0')}`;

/** Which collapsible blocks are open, by key: kept across the redraws of a running execution. */
const openBlocks = new Map<string, boolean>();

/** A collapsible block (`<details>`) whose open state outlives a redraw. */
function collapsible(key: string, title: Node | string, openByDefault: boolean, ...content: Node[]) {
  const block = element('details', { 'data-block': key }, element('summary', {}, title), ...content);
  block.open = openBlocks.get(key) ?? openByDefault;
  block.addEventListener('toggle', () => openBlocks.set(key, block.open));
  return block;
}

/** A JSON text, indented, in a collapsible block. */
const jsonBlock = (key: string, title: string, json: string, openByDefault = true) =>
  collapsible(key, title, openByDefault, element('pre', { 'data-json': key }, pretty(json)));

const statusBadge = (status: ConsoleStatus) => element('span', { class: `status ${status}` }, status);

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return (await response.json()) as T;
}

let listRequests = 0;

async function refreshList() {
  const status = $<HTMLSelectElement>('#status-filter').value;
  const text = $<HTMLInputElement>('#text-filter').value.trim();
  const query = new URLSearchParams({ ...(status ? { status } : {}), ...(text ? { q: text } : {}) });
  const request = ++listRequests;
  const list = await getJson<ListAnswer>(`${API}/executions?${query}`);
  // A slower answer to an older filter must not replace a newer one.
  if (request !== listRequests) return;
  const rows = list.executions.map((e) => {
    const row = element(
      'tr',
      { 'data-execution-arn': e.executionArn, 'data-status': e.status },
      element('td', {}, time(e.startDate)),
      element('td', {}, statusBadge(e.status)),
      element('td', { class: 'order', title: e.orderId ?? e.name }, e.orderId ?? e.name),
      element('td', {}, duration(e.durationMs)),
      e.reason
        ? element('td', { class: 'reason' }, e.reason)
        : element('td', { class: 'muted', title: 'the state it ended in' }, e.endState ?? ''),
    );
    if (e.executionArn === selectedArn) row.classList.add('selected');
    row.addEventListener('click', () => select(e.executionArn));
    return row;
  });
  $('#executions tbody').replaceChildren(...rows);
  // Which filter the rows answer (what a test waits for).
  $('#executions').setAttribute('data-filter', `${status}|${text}`);
  $('#count').textContent =
    `${list.executions.length} shown of ${list.matched} matching, ${list.total} kept, ${list.running} running`;
  $('#machine').textContent = [...new Set(list.executions.map((e) => e.machine))].join(', ');
  $('#dead-letters').replaceChildren(
    ...Object.entries(list.deadLetters).map(([queue, depth]) =>
      element(
        'span',
        { class: depth > 0 ? 'dlq nonzero' : 'dlq', 'data-queue': queue, 'data-depth': String(depth) },
        `${queue}: ${depth}`,
      ),
    ),
  );
}

function select(arn: string) {
  if (arn !== selectedArn) selectedState = undefined;
  selectedArn = arn;
  history.replaceState(null, '', `#${encodeURIComponent(arn)}`);
  for (const row of document.querySelectorAll('#executions tbody tr')) {
    row.classList.toggle('selected', row.getAttribute('data-execution-arn') === arn);
  }
  void refreshDetail();
}

async function refreshDetail() {
  if (!selectedArn) return;
  const arn = selectedArn;
  const answer = await getJson<DetailAnswer>(`${API}/execution?arn=${encodeURIComponent(arn)}`);
  if (arn !== selectedArn) return;
  detail = answer;
  const e = answer.execution;
  $('#summary').replaceChildren(
    statusBadge(e.status),
    ` ${e.orderId ?? e.name} · started ${time(e.startDate)} · ${duration(e.durationMs)}`,
    e.reason ? ` · ${e.reason}` : '',
    e.historyKept ? '' : ' · history no longer kept',
  );
  $('#summary').setAttribute('data-status', e.status);
  $('#summary').classList.remove('muted');
  showExecutionData(answer);
  drawGraph(answer.graph, answer.states);
  showState();
  showHistory(answer);
  showCorrelatedLogs(answer);
}

/** The execution's input and its output (or its error and cause), as JSON, each collapsible. */
function showExecutionData(answer: DetailAnswer) {
  const e = answer.execution;
  // Closed until opened (the graph stays in view); once opened, open for every execution shown after.
  const blocks: HTMLElement[] = [jsonBlock('execution-input', 'Execution input', e.input, false)];
  if (e.output !== undefined) blocks.push(jsonBlock('execution-output', 'Execution output', e.output, false));
  if (e.error !== undefined || e.cause !== undefined) {
    blocks.push(
      collapsible(
        'execution-error',
        'Execution error',
        true,
        element(
          'pre',
          { 'data-json': 'execution-error' },
          [e.error ?? '', pretty(e.cause)].filter(Boolean).join('\n'),
        ),
      ),
    );
  }
  if (e.status === 'RUNNING') blocks.push(element('p', { class: 'muted' }, 'Running: no output yet.'));
  $('#execution-data').replaceChildren(...blocks);
}

/** The event history as Step Functions records it: a row per event, its details collapsed. */
function showHistory(answer: DetailAnswer) {
  const rows = answer.history.map((event) => {
    const stateCell = element('td', { class: 'state-name' }, event.state ?? '');
    if (event.state && answer.states[event.state]) {
      const link = element('a', { href: '#', 'data-select-state': event.state }, event.state);
      link.addEventListener('click', (click) => {
        click.preventDefault();
        selectState(event.state!);
        $('#state-detail').scrollIntoView({ block: 'nearest' });
      });
      stateCell.replaceChildren(link);
    }
    const details = element('td', { class: 'event-details' }, event.summary);
    if (event.requestId) {
      details.append(
        ' ',
        element(
          'span',
          { class: 'muted', title: "the invocation's request id" },
          `(request ${event.requestId})`,
        ),
      );
    }
    if (event.details) {
      details.append(
        collapsible(
          `event-${event.id}`,
          'details',
          false,
          element('pre', {}, JSON.stringify(readableDetails(event.details), null, 2)),
        ),
      );
    }
    return element(
      'tr',
      { 'data-event-id': String(event.id), 'data-type': event.type },
      element('td', {}, String(event.id)),
      element('td', { class: 'event-type' }, event.type),
      element('td', {}, preciseTime(event.timestamp)),
      element('td', {}, `+${duration(event.elapsedMs) || '0 ms'}`),
      stateCell,
      details,
    );
  });
  const table = element(
    'table',
    { id: 'history-table', class: 'history' },
    element(
      'thead',
      {},
      element(
        'tr',
        {},
        ...['#', 'Type', 'Time', 'Elapsed', 'State', 'Details'].map((t) => element('th', {}, t)),
      ),
    ),
    element('tbody', {}, ...rows),
  );
  $('#history').replaceChildren(
    collapsible(
      'history',
      `Event history (${answer.history.length} events)`,
      true,
      answer.execution.historyKept
        ? table
        : element('p', { class: 'muted' }, 'The history of this execution is no longer kept.'),
    ),
  );
}

/** Log lines as a table: time, function (when several), level, message; the whole line on a click. */
function logTable(lines: LogLine[], withFunction: boolean, attemptOf?: (line: LogLine) => string) {
  const header = [
    ...(attemptOf ? ['Attempt'] : []),
    'Time',
    ...(withFunction ? ['Function'] : []),
    'Level',
    'Message',
  ];
  return element(
    'table',
    { class: 'log-lines' },
    element('thead', {}, element('tr', {}, ...header.map((t) => element('th', {}, t)))),
    element(
      'tbody',
      {},
      ...lines.map((line) =>
        element(
          'tr',
          { 'data-request-id': line.requestId ?? '', 'data-function': line.functionName },
          ...(attemptOf ? [element('td', {}, attemptOf(line))] : []),
          element('td', {}, line.time === undefined ? '' : preciseTime(line.time)),
          ...(withFunction ? [element('td', {}, line.functionName)] : []),
          element('td', {}, line.level ?? ''),
          element(
            'td',
            { class: 'log-message' },
            element(
              'details',
              {},
              element('summary', {}, logLineSummary(line)),
              element('pre', {}, line.fields ? JSON.stringify(line.fields, null, 2) : line.text),
            ),
          ),
        ),
      ),
    ),
  );
}

async function fetchLogs(query: URLSearchParams): Promise<LogsAnswer> {
  const response = await fetch(`${LOGS}?${query}`);
  const body = (await response.json()) as LogsAnswer & { message?: string };
  if (!response.ok) throw new Error(body.message ?? `${LOGS}: ${response.status}`);
  return body;
}

/** The lines of a state's attempts, by their request ids: final once every attempt has ended. */
const stateLogs = new Map<string, { answer: LogsAnswer; final: boolean }>();

/** Fills the state panel's log lines: every line its attempts' invocations wrote, by request id. */
async function showStateLogs(attempts: readonly Attempt[]) {
  const panel = document.querySelector<HTMLElement>('#state-logs');
  if (!panel) return;
  const invoked = attempts.filter((a) => a.requestId && a.functionName);
  if (!detail?.execution.logsKept) {
    panel.replaceChildren(
      element('p', { class: 'muted' }, "The functions' output goes to the terminal: no log lines kept."),
    );
    panel.setAttribute('data-loaded', 'true');
    return;
  }
  if (invoked.length === 0) {
    panel.replaceChildren(element('p', { class: 'muted' }, 'No function invoked: no log lines.'));
    panel.setAttribute('data-loaded', 'true');
    return;
  }
  const key = invoked.map((a) => a.requestId).join(',');
  panel.setAttribute('data-request-ids', key);
  const functions = [...new Set(invoked.map((a) => a.functionName!))];
  const attemptOf = (line: LogLine) =>
    String(invoked.find((a) => a.requestId === line.requestId)?.number ?? '');
  const render = (answer: LogsAnswer) => {
    panel.replaceChildren(
      element(
        'p',
        { class: 'muted' },
        `${answer.lines.length} line${answer.lines.length === 1 ? '' : 's'} logged by ${functions.join(', ')} ` +
          `(request ${invoked.map((a) => a.requestId).join(', ')})${answer.truncated ? ', the first shown' : ''}`,
      ),
      ...(answer.lines.length === 0 ? [] : [logTable(answer.lines, false, attemptOf)]),
    );
    panel.setAttribute('data-loaded', 'true');
  };
  // What was read before shows at once (no flicker while the execution runs and the panel is redrawn).
  const known = stateLogs.get(key);
  if (known) render(known.answer);
  if (known?.final) return;
  const query = new URLSearchParams();
  for (const a of invoked) query.append('requestId', a.requestId!);
  if (functions.length === 1) query.set('function', functions[0]!);
  let answer: LogsAnswer;
  try {
    answer = await fetchLogs(query);
  } catch (error) {
    panel.replaceChildren(element('p', { class: 'muted' }, (error as Error).message));
    return;
  }
  const final = invoked.length === attempts.length && attempts.every((a) => a.outcome !== 'running');
  stateLogs.set(key, { answer, final });
  // The panel may have been redrawn, or show another state, by now.
  if (panel.isConnected && panel.getAttribute('data-request-ids') === key) render(answer);
}

/**
 * Every line of the execution's request: those with its correlation id (the placing request's, say) and
 * those its Task invocations wrote, across functions; read when the block is opened.
 */
function showCorrelatedLogs(answer: DetailAnswer) {
  const e = answer.execution;
  const target = $('#correlated-logs');
  const requestIds = answer.history.flatMap((row) => (row.requestId ? [row.requestId] : []));
  if (!e.logsKept || (e.correlationId === undefined && requestIds.length === 0)) {
    target.replaceChildren();
    return;
  }
  const body = element('div', { id: 'correlated-lines' }, element('p', { class: 'muted' }, 'Loading…'));
  const block = collapsible(
    'correlated-logs',
    e.correlationId ? `All log lines of correlation id ${e.correlationId}` : 'All log lines of its Tasks',
    false,
    body,
  );
  const load = () => {
    const query = new URLSearchParams();
    if (e.correlationId) query.set('correlationId', e.correlationId);
    for (const id of requestIds) query.append('requestId', id);
    fetchLogs(query).then(
      (logs) => {
        body.replaceChildren(
          element(
            'p',
            { class: 'muted' },
            `${logs.lines.length} lines${logs.truncated ? ', the first shown' : ''}`,
          ),
          ...(logs.lines.length === 0 ? [] : [logTable(logs.lines, true)]),
        );
        body.setAttribute('data-loaded', 'true');
      },
      (error: Error) => body.replaceChildren(element('p', { class: 'muted' }, error.message)),
    );
  };
  block.addEventListener('toggle', () => {
    if (block.open) load();
  });
  if (block.open) load();
  target.replaceChildren(block);
}

function drawGraph(graph: StateGraph, states: Record<string, StateResult>) {
  const w = graph.nodeWidth;
  const h = graph.nodeHeight;
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  const reached = (name: string) => (states[name]?.outcome ?? 'not-reached') !== 'not-reached';
  const edges = graph.edges.map((edge) => {
    const from = byName.get(edge.from)!;
    const to = byName.get(edge.to)!;
    const d = edgePath(from, to, edge.kind, w, h);
    const taken = reached(edge.from) && reached(edge.to);
    return svg(
      'path',
      {
        class: `edge ${edge.kind}${taken ? ' taken' : ''}`,
        d,
        'marker-end': 'url(#arrow)',
      },
      svg('title', {}, `${edge.from} → ${edge.to}${edge.label ? ` (${edge.label})` : ''}`),
    );
  });
  const nodes = graph.nodes.map((node) => {
    const result = states[node.name];
    const outcome = result?.outcome ?? 'not-reached';
    const attempts = result?.attempts.length ?? 0;
    const sub = [node.type, attempts > 1 ? `${attempts} attempts` : '', duration(spent(result))]
      .filter(Boolean)
      .join(' · ');
    const group = svg(
      'g',
      {
        class: `state${node.name === selectedState ? ' selected' : ''}`,
        'data-state': node.name,
        'data-outcome': outcome,
        transform: `translate(${node.x},${node.y})`,
      },
      svg('rect', { width: w, height: h, rx: 6 }),
      svg(
        'text',
        {
          x: w / 2,
          y: 18,
          'text-anchor': 'middle',
          'font-weight': 600,
          // A long name is squeezed into its box rather than spilling over the next one.
          ...(node.name.length > 19 ? { textLength: w - 12, lengthAdjust: 'spacingAndGlyphs' } : {}),
        },
        node.name,
      ),
      svg('text', { x: w / 2, y: 34, 'text-anchor': 'middle', 'font-size': 10.5 }, sub),
      svg('title', {}, `${node.name} (${node.type}): ${outcome}${node.comment ? `\n${node.comment}` : ''}`),
    );
    group.addEventListener('click', () => selectState(node.name));
    return group;
  });
  const marker = svg(
    'marker',
    { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' },
    svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#7b838d' }),
  );
  $('#graph').replaceChildren(
    svg(
      'svg',
      { width: graph.width, height: graph.height, viewBox: `0 0 ${graph.width} ${graph.height}` },
      svg('defs', {}, marker),
      ...edges,
      ...nodes,
    ),
  );
}

/**
 * A transition downwards leaves a box's bottom for the next one's top, a Catch its right side (apart
 * from the main flow); a loop goes round the right side.
 */
function edgePath(from: GraphNode, to: GraphNode, kind: string, w: number, h: number): string {
  if (to.y > from.y) {
    const [x1, y1] = kind === 'catch' ? [from.x + w, from.y + h / 2] : [from.x + w / 2, from.y + h];
    const [x2, y2] = [to.x + w / 2, to.y];
    const bend = Math.max(20, (y2 - y1) / 2);
    return kind === 'catch'
      ? `M${x1},${y1} C${x1 + Math.max(30, (x2 - x1) / 2)},${y1} ${x2},${y2 - bend} ${x2},${y2}`
      : `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`;
  }
  const [x1, y1, x2, y2] = [from.x + w, from.y + h / 2, to.x + w, to.y + h / 2];
  const out = Math.max(x1, x2) + 30;
  return `M${x1},${y1} C${out},${y1} ${out},${y2} ${x2},${y2}`;
}

function spent(result: StateResult | undefined): number | undefined {
  if (!result?.enteredAt) return undefined;
  return (
    (result.exitedAt ?? (result.outcome === 'running' ? Date.now() : result.enteredAt)) - result.enteredAt
  );
}

function selectState(name: string) {
  selectedState = name;
  for (const g of document.querySelectorAll('g.state')) {
    g.classList.toggle('selected', g.getAttribute('data-state') === name);
  }
  showState();
}

function showState() {
  const panel = $('#state-detail');
  if (!detail || !selectedState) {
    panel.replaceChildren(
      element('p', { class: 'muted' }, 'Click a state for its attempts, input, output and log lines.'),
    );
    return;
  }
  const result = detail.states[selectedState];
  const node = detail.graph.nodes.find((n) => n.name === selectedState);
  if (!result || !node) return;
  const block = (title: string, json: string | undefined) =>
    json === undefined ? [] : [jsonBlock(`state-${title.toLowerCase()}`, title, json)];
  const attempts = result.attempts.map((a) =>
    element(
      'tr',
      {},
      element('td', {}, String(a.number)),
      element('td', {}, time(a.startedAt)),
      element('td', {}, duration(a.endedAt === undefined ? undefined : a.endedAt - a.startedAt)),
      element('td', {}, a.outcome),
      element('td', {}, a.error ?? ''),
      element('td', { class: 'request-id' }, a.requestId ?? ''),
    ),
  );
  panel.replaceChildren(
    element('h3', { 'data-state-detail': node.name }, `${node.name} · ${node.type} · ${result.outcome}`),
    element(
      'p',
      {},
      result.enteredAt === undefined
        ? 'Not reached.'
        : `Entered ${time(result.enteredAt)}${result.exitedAt ? `, left ${time(result.exitedAt)}` : ''} (${duration(spent(result))})` +
            (result.visits > 1 ? `, ${result.visits} visits (the last shown)` : ''),
    ),
    ...(attempts.length === 0
      ? []
      : [
          element('h3', {}, 'Attempts'),
          element(
            'table',
            { class: 'attempts' },
            element(
              'thead',
              {},
              element(
                'tr',
                {},
                ...['#', 'Started', 'Took', 'Outcome', 'Error', 'Request id'].map((t) =>
                  element('th', {}, t),
                ),
              ),
            ),
            element('tbody', {}, ...attempts),
          ),
        ]),
    ...(result.error
      ? [
          element('h3', {}, 'Error'),
          element('pre', {}, `${result.error.error}\n${pretty(result.error.cause) || ''}`.trim()),
        ]
      : []),
    ...block('Input', result.input),
    ...block('Output', result.output),
    element('h3', {}, 'Log lines'),
    element(
      'div',
      { id: 'state-logs', 'data-state': node.name },
      element('p', { class: 'muted' }, 'Loading…'),
    ),
  );
  void showStateLogs(result.attempts);
}

let listTimer: ReturnType<typeof setTimeout> | undefined;
const refreshListSoon = (delayMs: number) => {
  clearTimeout(listTimer);
  listTimer = setTimeout(() => void refreshList().catch(() => undefined), delayMs);
};
/**
 * The API takes a token on every route: the local cloud is its issuer, and the console asks it for an
 * operator's (an hour long), copies `Bearer <token>` and shows it (to paste into curl or the /docs page).
 */
async function apiToken() {
  const response = await fetch('/_local/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sub: 'console-operator', scope: 'commerce/admin' }),
  });
  const body = (await response.json()) as { access_token?: string; error_description?: string };
  if (!body.access_token) throw new Error(body.error_description ?? `POST /_local/token: ${response.status}`);
  const header = `Bearer ${body.access_token}`;
  await navigator.clipboard?.writeText(header).catch(() => undefined);
  window.prompt('Authorization header for the API (copied; valid for an hour):', header);
}
$('#api-token').addEventListener('click', () => {
  apiToken().catch((error: Error) => window.alert(error.message));
});
$('#status-filter').addEventListener('change', () => refreshListSoon(0));
$('#text-filter').addEventListener('input', () => refreshListSoon(200));

// Live: nothing is asked while the page is hidden.
setInterval(() => {
  if (!document.hidden) void refreshList().catch(() => undefined);
}, 2000);
setInterval(() => {
  if (!document.hidden && detail?.execution.status === 'RUNNING') void refreshDetail().catch(() => undefined);
}, 1000);
void refreshList();
if (selectedArn) void refreshDetail();
else showState();
