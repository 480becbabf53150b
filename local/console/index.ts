import { join } from 'node:path';
import { build } from 'esbuild';
import type { AwsEndpoint } from '../aws-endpoint';
import type { LocalQueues } from '../queues';
import type { ConsoleExecution, LocalStepFunctions } from '../stepfunctions';
import {
  correlationIdOf,
  type ExecutionLike,
  executionFilter,
  executionRow,
  historyRows,
  type StateGraph,
  searchKey,
  stateGraph,
  stateResults,
} from './saga-view';

/** Where the console is served on the AWS endpoint. */
export const CONSOLE_PATH = '/_local/console';

const DEFAULT_ROWS = 100;
const MAX_ROWS = 1000;

/**
 * The saga console: a page on the local AWS endpoint listing the state
 * machines' executions (newest first, filterable), drawing one as its state
 * machine's graph coloured by what each state did, live while it runs, with
 * the dead-letter queues' depths. Everything is computed when the page asks
 * (it polls while open), from what the local Step Functions keeps anyway:
 * with nobody looking, the console costs nothing. An execution shows its
 * input and output, its event history, and each Task attempt's log lines
 * (read from `GET /_local/logs` by the invocation's request id, when
 * `logsKept`: the functions' output goes to files, not to the terminal).
 */
export function serveConsole(
  endpoint: AwsEndpoint,
  stepFunctions: LocalStepFunctions,
  queues: LocalQueues,
  logsKept = true,
) {
  const graphs = new Map<string, StateGraph>();
  const graphOf = (machineArn: string): StateGraph => {
    let graph = graphs.get(machineArn);
    if (!graph) {
      const definition = stepFunctions.definitionOf(machineArn);
      if (!definition) throw new Error(`no state machine ${machineArn}`);
      graph = stateGraph(definition);
      graphs.set(machineArn, graph);
    }
    return graph;
  };
  // Each finished execution's search key, computed the first time a text filter meets it (the
  // page is open) and let go with the execution.
  const keys = new WeakMap<ExecutionLike, string>();
  const keyOf = (execution: ExecutionLike) => {
    if (execution.status === 'RUNNING') return searchKey(execution);
    let key = keys.get(execution);
    if (key === undefined) {
      key = searchKey(execution);
      keys.set(execution, key);
    }
    return key;
  };
  // The page's script is bundled on the first visit, not at start.
  let script: Promise<string> | undefined;
  const bundle = () =>
    build({
      entryPoints: [join(__dirname, 'client.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      target: 'es2020',
      logLevel: 'silent',
    }).then((result) => result.outputFiles[0]!.text);

  endpoint.servePath('GET', new RegExp(`^${CONSOLE_PATH}/?$`), async () => ({
    status: 200,
    body: PAGE,
    text: true,
    headers: { 'content-type': 'text/html; charset=utf-8' },
  }));
  endpoint.servePath('GET', new RegExp(`^${CONSOLE_PATH}/app\\.js$`), async () => {
    script ??= bundle().catch((error: Error) => {
      script = undefined;
      throw error;
    });
    return {
      status: 200,
      body: await script,
      text: true,
      headers: { 'content-type': 'text/javascript; charset=utf-8' },
    };
  });
  endpoint.servePath('GET', new RegExp(`^${CONSOLE_PATH}/api/executions$`), async (_match, _body, query) => {
    const status = query.get('status') || undefined;
    const text = query.get('q')?.trim() || undefined;
    const limit = Math.min(MAX_ROWS, Math.max(1, Number(query.get('limit')) || DEFAULT_ROWS));
    const rows = [];
    let total = 0;
    let matched = 0;
    const now = Date.now();
    const matches = executionFilter({ ...(status ? { status } : {}), ...(text ? { text } : {}) }, keyOf);
    for (const execution of stepFunctions.executionsNewestFirst()) {
      total++;
      const graph = graphOf(execution.machine.arn);
      if (!matches(execution, graph)) continue;
      matched++;
      if (rows.length < limit)
        rows.push({ ...executionRow(execution, graph, now), machine: execution.machine.name });
    }
    return {
      status: 200,
      body: {
        executions: rows,
        matched,
        total,
        running: stepFunctions.runningCount,
        deadLetters: queues.depths(),
      },
    };
  });
  endpoint.servePath('GET', new RegExp(`^${CONSOLE_PATH}/api/execution$`), async (_match, _body, query) => {
    const execution = stepFunctions.consoleExecution(query.get('arn') ?? '');
    if (!execution) return { status: 404, body: { message: `no execution ${query.get('arn')}` } };
    return { status: 200, body: executionDetail(execution, graphOf(execution.machine.arn), logsKept) };
  });
}

function executionDetail(execution: ConsoleExecution, graph: StateGraph, logsKept: boolean) {
  const correlationId = correlationIdOf(execution.input);
  return {
    execution: {
      ...executionRow(execution, graph),
      machine: execution.machine.name,
      input: execution.input,
      ...(execution.output === undefined ? {} : { output: execution.output }),
      ...(execution.error === undefined ? {} : { error: execution.error }),
      ...(execution.cause === undefined ? {} : { cause: execution.cause }),
      ...(correlationId === undefined ? {} : { correlationId }),
      historyKept: !execution.historyDropped,
      logsKept,
    },
    graph,
    states: stateResults(graph, execution.status, execution.events, execution.invocations),
    history: historyRows(execution.events, execution.startDate, execution.invocations),
  };
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Saga console · local cloud</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
  :root { --ok: #2e9e4f; --failed: #d64541; --compensated: #e6a100; --idle: #b9bec5; --running: #2f7fd8; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: #1d232b; background: #f5f6f8; }
  header { display: flex; gap: 16px; align-items: center; padding: 8px 16px; background: #232f3e; color: #fff; }
  header h1 { font-size: 16px; margin: 0; font-weight: 600; }
  #dead-letters { margin-left: auto; display: flex; gap: 8px; flex-wrap: wrap; }
  #api-token { font: inherit; font-size: 12px; padding: 2px 8px; cursor: pointer; }
  .dlq { padding: 2px 8px; border-radius: 10px; background: #3b4a5e; }
  .dlq.nonzero { background: var(--failed); }
  main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 780px); gap: 12px; padding: 12px; }
  section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 10px; min-width: 0; }
  .filters { display: flex; gap: 8px; margin-bottom: 8px; }
  .filters input { flex: 1; }
  input, select { font: inherit; padding: 4px 6px; }
  table { width: 100%; border-collapse: collapse; }
  #executions { table-layout: fixed; }
  #executions col.started { width: 76px; } #executions col.status { width: 120px; }
  #executions col.duration { width: 78px; } #executions col.outcome { width: 150px; }
  th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eef0f3; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  td.order { font-family: ui-monospace, monospace; font-size: 11px; }
  tbody tr { cursor: pointer; }
  tbody tr:hover { background: #f0f5fb; }
  tbody tr.selected { background: #dcebfa; }
  .status { font-weight: 600; font-size: 11px; padding: 1px 6px; border-radius: 8px; color: #fff; }
  .status.SUCCEEDED { background: var(--ok); }
  .status.COMPENSATED { background: var(--compensated); }
  .status.FAILED, .status.TIMED_OUT, .status.ABORTED { background: var(--failed); }
  .status.RUNNING { background: var(--running); }
  #count { color: #68707a; margin: 6px 0 0; }
  /* Scaled down to the panel when the ASL is wider than it (the viewBox keeps the proportions). */
  #graph svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }
  g.state rect { stroke: #1d232b33; stroke-width: 1; rx: 6; }
  g.state text { font-size: 12px; pointer-events: none; }
  g.state { cursor: pointer; }
  g.state.selected rect { stroke: #1d232b; stroke-width: 2.5; }
  g.state[data-outcome="succeeded"] rect { fill: var(--ok); }
  g.state[data-outcome="failed"] rect { fill: var(--failed); }
  g.state[data-outcome="compensated"] rect { fill: var(--compensated); }
  g.state[data-outcome="not-reached"] rect { fill: var(--idle); }
  g.state[data-outcome="running"] rect { fill: var(--running); }
  g.state[data-outcome="not-reached"] text { fill: #1d232b; }
  g.state text { fill: #fff; }
  path.edge { fill: none; stroke: #7b838d; stroke-width: 1.2; opacity: 0.45; }
  path.edge.catch { stroke-dasharray: 5 4; stroke: #c0392b; }
  path.edge.taken { stroke-width: 2.2; opacity: 1; }
  .legend { display: flex; gap: 12px; justify-content: center; margin: 6px 0; color: #4a525c; }
  .legend i { display: inline-block; width: 11px; height: 11px; border-radius: 3px; margin-right: 4px; vertical-align: -1px; }
  #summary { margin-bottom: 6px; }
  #state-detail pre, #execution-data pre, #history pre, #correlated-logs pre { background: #f6f8fa; border: 1px solid #e4e7eb; padding: 6px; max-height: 240px; overflow: auto; white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
  #state-detail h3 { margin: 8px 0 4px; font-size: 14px; }
  details > summary { cursor: pointer; font-weight: 600; margin: 4px 0; }
  td details > summary { font-weight: normal; }
  #execution-data, #history, #correlated-logs { margin-top: 8px; }
  #execution-data { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 0 10px; align-items: start; }
  #execution-data pre { max-height: 160px; }
  table.history td, table.log-lines td { vertical-align: top; }
  table.history td.event-details, table.log-lines td.log-message { white-space: normal; overflow: visible; word-break: break-word; }
  table.history td.event-type { font-family: ui-monospace, monospace; font-size: 11px; }
  td.request-id { font-family: ui-monospace, monospace; font-size: 10.5px; }
  .muted { color: #68707a; }
</style>
</head>
<body>
<header><h1>Saga console</h1><span class="muted" id="machine"></span><div id="dead-letters" title="Dead-letter queues: messages held"></div><button id="api-token" title="An operator's token from the local issuer (POST /_local/token), copied for curl or the /docs page">API token</button></header>
<main>
  <section>
    <div class="filters">
      <select id="status-filter" aria-label="Status">
        <option value="">All statuses</option>
        <option>RUNNING</option><option>SUCCEEDED</option><option>COMPENSATED</option>
        <option>FAILED</option><option>TIMED_OUT</option><option>ABORTED</option>
      </select>
      <input id="text-filter" type="search" placeholder="Order id, customer id, reason…" aria-label="Filter">
    </div>
    <table id="executions">
      <colgroup><col class="started"><col class="status"><col><col class="duration"><col class="outcome"></colgroup>
      <thead><tr><th>Started</th><th>Status</th><th>Order</th><th>Duration</th><th title="The cancellation reason, or else the state it ended in">Reason / end</th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="count"></p>
  </section>
  <section>
    <div id="summary" class="muted">Choose an execution.</div>
    <div id="execution-data"></div>
    <div class="legend">
      <span><i style="background:var(--ok)"></i>succeeded</span>
      <span><i style="background:var(--failed)"></i>failed</span>
      <span><i style="background:var(--compensated)"></i>compensated</span>
      <span><i style="background:var(--running)"></i>running</span>
      <span><i style="background:var(--idle)"></i>not reached</span>
      <span>- - - catch</span>
    </div>
    <div id="graph"></div>
    <div id="state-detail"></div>
    <div id="history"></div>
    <div id="correlated-logs"></div>
  </section>
</main>
<script src="${CONSOLE_PATH}/app.js"></script>
</body>
</html>
`;
