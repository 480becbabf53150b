/** The run's report: `report.md` with SVG charts and `summary.json`, written from what the run measured. */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { type ArtilleryPeriod, type LevelMetrics, type Summary, sustained } from './artillery';
import { lineChart } from './charts';
import { type CostLine, type CostModel, PRICES } from './cost';
import type { InvariantReport } from './invariants';
import { OPERATIONS, type Operation, type Profile } from './profiles';
import type { LocalStats, Target } from './target';

export interface LevelResult {
  readonly metrics: LevelMetrics;
  /** The local cloud's counters for the level (reset before it, read after); absent for a stage. */
  readonly stats: LocalStats | undefined;
  readonly cost: CostModel | undefined;
  readonly intermediate: readonly ArtilleryPeriod[];
}

export interface MemorySample {
  readonly secondsFromStart: number;
  readonly rssMb: number;
  readonly mainHeapMb: number;
  readonly functionsHeapMb: number;
}

export interface RunResult {
  readonly profile: Profile;
  readonly target: Target;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: string;
  /** The machine's one-thread speed before the run and after it (see cpuProbe), ms. */
  readonly cpuProbeMs?: { readonly before: number; readonly after: number };
  readonly seedCounts: { customers: number; products: number };
  readonly levels: readonly LevelResult[];
  readonly invariants: InvariantReport;
  readonly memory: readonly MemorySample[];
  /** Why the run failed (errors, broken invariants); empty when it passed. */
  readonly failures: readonly string[];
  /** Why the levels after the last one run were skipped. */
  readonly stoppedEarly?: string;
}

export const machine = () =>
  `${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node.js ${process.version}, ${process.platform}`;

const ms = (n: number | undefined) => (n === undefined ? 'n/a' : n >= 100 ? n.toFixed(0) : n.toFixed(1));
const num = (n: number | undefined, digits = 1) =>
  n === undefined
    ? 'n/a'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
const usd = (n: number | undefined) =>
  n === undefined ? 'n/a' : `$${n < 0.01 ? n.toFixed(5) : n.toFixed(4)}`;
const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
const ops = Object.keys(OPERATIONS) as Operation[];
const latencyCells = (s: Summary | undefined) => [
  num(s?.count, 0),
  ms(s?.p50),
  ms(s?.p90),
  ms(s?.p95),
  ms(s?.p99),
  ms(s?.max),
];

/** The level the report calls the highest sustained: every level up to it sustained too. */
export function highestSustained(levels: readonly LevelResult[]) {
  let best: LevelResult | undefined;
  for (const level of levels) {
    if (!sustained(level.metrics)) break;
    best = level;
  }
  return best;
}

function charts(dir: string, run: RunResult) {
  const levels = run.levels.map((l) => l.metrics);
  const files: [string, string][] = [];
  const logX = levels.length > 1 && levels.at(-1)!.targetRate / levels[0]!.targetRate >= 10;
  if (levels.length > 1) {
    files.push([
      'achieved-vs-target.svg',
      lineChart({
        title: 'Achieved vs target arrival rate',
        xLabel: 'target iterations/s',
        yLabel: 'iterations/s',
        logX,
        logY: logX,
        series: [
          {
            name: 'ideal (achieved = target)',
            points: levels.map((m) => [m.targetRate, m.targetRate]),
            dashed: true,
          },
          { name: 'achieved iterations/s', points: levels.map((m) => [m.targetRate, m.achievedRate]) },
          { name: 'HTTP requests/s', points: levels.map((m) => [m.targetRate, m.httpRate]) },
        ],
      }),
    ]);
    files.push([
      'p95-by-level.svg',
      lineChart({
        title: 'p95 latency per operation by level',
        xLabel: 'target iterations/s',
        yLabel: 'p95 ms',
        logX,
        logY: true,
        series: ops.map((op) => ({
          name: op,
          points: levels.flatMap((m) => {
            const p95 = m.operations[op].latency?.p95;
            return p95 === undefined ? [] : [[m.targetRate, p95] as const];
          }),
        })),
      }),
    ]);
    files.push([
      'saga-by-level.svg',
      lineChart({
        title: 'Saga end to end (placed → seen final) by level',
        xLabel: 'target iterations/s',
        yLabel: 'ms',
        logX,
        logY: true,
        rules: [{ y: run.profile.sagaLimitSeconds * 1000, label: `${run.profile.sagaLimitSeconds} s limit` }],
        series: (['p50', 'p95', 'p99'] as const).map((p) => ({
          name: p,
          points: levels.flatMap((m) =>
            m.saga.endToEnd ? [[m.targetRate, m.saga.endToEnd[p]] as const] : [],
          ),
        })),
      }),
    ]);
  }
  // Over time (the soak; any run with more than one 10 s period): p95 per operation, memory.
  const periods = run.levels.flatMap((l) => l.intermediate);
  if (periods.length > 2) {
    const start = Math.min(...periods.map((p) => p.firstMetricAt));
    const minutes = (p: ArtilleryPeriod) => (p.firstMetricAt - start) / 60_000;
    files.push([
      'p95-over-time.svg',
      lineChart({
        title: 'p95 latency per operation over time (10 s periods)',
        xLabel: 'minutes',
        yLabel: 'p95 ms',
        logY: true,
        series: [
          ...ops.map((op) => ({
            name: op,
            points: periods.flatMap((p) => {
              const s = p.summaries[`plugins.metrics-by-endpoint.response_time.${op}`];
              return s ? [[minutes(p), s.p95] as const] : [];
            }),
          })),
          {
            name: 'saga end to end',
            points: periods.flatMap((p) => {
              const s = p.summaries['saga.end_to_end'];
              return s ? [[minutes(p), s.p95] as const] : [];
            }),
          },
        ],
      }),
    ]);
  }
  if (run.memory.length > 1) {
    const series = (name: string, pick: (m: MemorySample) => number) => ({
      name,
      points: run.memory.map((m) => [m.secondsFromStart / 60, pick(m)] as const),
    });
    files.push([
      'memory-over-time.svg',
      lineChart({
        title: 'Local cloud memory over time',
        xLabel: 'minutes',
        yLabel: 'MB',
        series: [
          series('main process RSS', (m) => m.rssMb),
          series('main process heap', (m) => m.mainHeapMb),
          series('function sandboxes heap (sum)', (m) => m.functionsHeapMb),
        ],
      }),
    ]);
  }
  for (const [name, svg] of files) writeFileSync(join(dir, name), svg);
  return new Set(files.map(([name]) => name));
}

function resourcesSection(run: RunResult, focus: LevelResult | undefined) {
  const withStats = run.levels.filter((l) => l.stats && l.cost);
  if (withStats.length === 0)
    return 'No counters: the target is not a local cloud (or `--aws-endpoint` was not given), so there is nothing to price.';
  const out: string[] = [];
  const q = (lines: readonly CostLine[], item: string) => lines.find((l) => l.item === item)?.quantity;
  out.push(
    'Per 10,000 transactions (iterations of the mix), from the local cloud’s counters, reset before each level and read after it:',
    '',
    table(
      [
        'target/s',
        'Lambda invocations',
        'Lambda GB-s',
        'HTTP requests',
        'DynamoDB RRU',
        'DynamoDB WRU',
        'events',
        'state transitions',
        'executions',
      ],
      withStats.map((l) => {
        const c = l.cost!;
        return [
          String(l.metrics.targetRate),
          num(q(c.common, 'Lambda requests'), 0),
          num(q(c.common, 'Lambda duration (arm64)'), 2),
          num(q(c.common, 'HTTP API requests'), 0),
          num(q(c.common, 'DynamoDB reads (on-demand)'), 0),
          num(q(c.common, 'DynamoDB writes (on-demand)'), 0),
          num(q(c.common, 'EventBridge custom events'), 0),
          num(q(c.standard, 'Step Functions STANDARD'), 0),
          num(q(c.express, 'Step Functions EXPRESS requests'), 0),
        ];
      }),
    ),
  );
  const withCpu = withStats.filter((l) => l.stats!.cpu);
  if (withCpu.length > 0) {
    out.push(
      '',
      'CPU per transaction on this machine, ms (from the local cloud’s own counters over the level and until its sagas ended): what bounds the rate two cores can serve.',
      '',
      table(
        [
          'target/s',
          'sandboxes: invocations',
          'sandboxes: starts',
          'main thread',
          'of which DynamoDB',
          'GC, JIT, libuv',
          'all',
        ],
        withCpu.map((l) => {
          const cpu = l.stats!.cpu!;
          const n = l.metrics.iterations.completed || 1;
          // The DynamoDB engine runs on the main thread: its share is part of mainThreadMs, not added.
          const all = cpu.sandboxInvocationMs + cpu.sandboxStartMs + cpu.mainThreadMs + cpu.otherThreadsMs;
          return [
            String(l.metrics.targetRate),
            num(cpu.sandboxInvocationMs / n, 1),
            num(cpu.sandboxStartMs / n, 1),
            num(cpu.mainThreadMs / n, 1),
            num(cpu.dynamodbMs / n, 1),
            num(cpu.otherThreadsMs / n, 1),
            num(all / n, 1),
          ];
        }),
      ),
    );
  }
  const level = focus?.stats ? focus : withStats.at(-1)!;
  const stats = level.stats!;
  const n = level.metrics.iterations.completed || 1;
  const per10k = (v: number | undefined) => (v === undefined ? undefined : (v / n) * 10_000);
  out.push(
    '',
    `Where it goes at ${level.metrics.targetRate}/s, per 10,000 transactions — Lambda by function:`,
    '',
    table(
      ['function', 'invocations', 'billed ms', 'memory MB', 'GB-s', 'p95 ms', 'errors'],
      Object.entries(stats.invocations ?? {})
        .sort((a, b) => (b[1].billedMs ?? 0) - (a[1].billedMs ?? 0))
        .map(([fn, i]) => [
          fn.replace(/[0-9A-F]{8}$/, ''),
          num(per10k(i.count), 0),
          num(per10k(i.billedMs), 0),
          num(i.memoryMb, 0),
          i.billedMs === undefined || i.memoryMb === undefined
            ? 'n/a'
            : num(per10k((i.billedMs / 1000) * (i.memoryMb / 1024)), 2),
          ms(i.p95),
          num(i.errors, 0),
        ]),
    ),
    '',
    'DynamoDB by table (request units; transactional ones bill double and are shown apart):',
    '',
    table(
      ['table', 'RRU', 'transactional RRU', 'WRU', 'transactional WRU', 'read calls', 'item writes'],
      [
        ...new Set([
          ...Object.keys(stats.dynamodb ?? {}),
          ...Object.keys(stats.reads ?? {}),
          ...Object.keys(stats.writes ?? {}),
        ]),
      ]
        .sort()
        .map((table) => {
          const u = stats.dynamodb?.[table];
          const reads = Object.values(stats.reads?.[table] ?? {}).reduce((a, b) => a + b, 0);
          return [
            table.replace(/[0-9A-F]{8}$/, ''),
            num(per10k(u?.readUnits), 0),
            num(per10k(u?.transactionalReadUnits), 0),
            num(per10k(u?.writeUnits), 0),
            num(per10k(u?.transactionalWriteUnits), 0),
            num(per10k(reads), 0),
            num(per10k(stats.writes?.[table]?.itemWrites), 0),
          ];
        }),
    ),
  );
  return out.join('\n');
}

/**
 * The hot-key meter's figures: on AWS one partition key takes at most 1,000
 * write units a second, so the share of a table's writes its hottest key
 * takes bounds how far the table scales before that key throttles.
 */
function hotKeysSection(run: RunResult, focus: LevelResult | undefined) {
  const level = focus?.stats ? focus : run.levels.filter((l) => l.stats).at(-1);
  const writes = Object.entries(level?.stats?.writes ?? {}).filter(([, t]) => t.itemWrites > 0);
  if (!level || writes.length === 0) return 'No counters: the target is not a local cloud.';
  const pct = (share: number) => `${num(share * 100, 2)}%`;
  const short = (key: string) => (key.length > 40 ? `${key.slice(0, 37)}…` : key);
  return [
    `Item writes per partition key at ${level.metrics.targetRate}/s, from the local cloud’s hot-key meter. On AWS one partition key takes at most 1,000 write units per second (an item written in a transaction costs 2), so a table whose hottest key takes a share *s* of its writes throttles on that key at about 1,000 / *s* item writes per second (500 / *s* transactional).`,
    '',
    table(
      [
        'table',
        'item writes',
        'distinct keys',
        'hottest key',
        'its share',
        'busiest second: writes',
        'hottest key’s share of it',
        'most writes on one key in a second',
      ],
      writes
        .sort((a, b) => b[1].itemWrites - a[1].itemWrites)
        .map(([name, t]) => {
          const hottest = t.hottestKeys[0];
          return [
            name.replace(/[0-9A-F]{8}$/, ''),
            num(t.itemWrites, 0),
            num(t.distinctKeys, 0),
            hottest ? `\`${short(hottest.key)}\`` : '—',
            hottest ? pct(hottest.share) : '—',
            num(t.busiestSecond?.writes, 0),
            t.busiestSecond ? pct(t.busiestSecond.hottestKey.share) : '—',
            num(t.peakKeySecond?.hottestKey.writes, 0),
          ];
        }),
    ),
  ].join('\n');
}

function costSection(run: RunResult, focus: LevelResult | undefined) {
  const withCost = run.levels.filter((l) => l.cost);
  if (withCost.length === 0) return 'n/a (no counters; see above).';
  const level = focus?.cost ? focus : withCost.at(-1)!;
  const c = level.cost!;
  const partial = (m: CostModel) => (m.totals.missing.length ? ' (partial)' : '');
  const breakdown = (lines: readonly CostLine[]) =>
    lines.map((l) => [l.item, `${num(l.quantity, 2)} ${l.unit}`, usd(l.usd)]);
  return [
    `Prices: ${PRICES.region}, ${PRICES.basis} Checked ${PRICES.checked} against the AWS pricing pages (\`load/prices.json\` names each).`,
    '',
    table(
      ['target/s', 'USD per 10,000 transactions, STANDARD', 'EXPRESS'],
      withCost.map((l) => [
        String(l.metrics.targetRate),
        `${usd(l.cost!.totals.STANDARD)}${partial(l.cost!)}`,
        `${usd(l.cost!.totals.EXPRESS)}${partial(l.cost!)}`,
      ]),
    ),
    '',
    `Breakdown at ${level.metrics.targetRate}/s, per 10,000 transactions:`,
    '',
    table(
      ['item', 'quantity', 'USD'],
      [
        ...breakdown(c.common),
        ...breakdown(c.standard).map(([a, b, d]) => [`${a} (STANDARD only)`, b!, d!]),
        ...breakdown(c.express).map(([a, b, d]) => [`${a} (EXPRESS only)`, b!, d!]),
        ['**total, STANDARD**', '', `**${usd(c.totals.STANDARD)}**`],
        ['**total, EXPRESS**', '', `**${usd(c.totals.EXPRESS)}**`],
      ],
    ),
    ...(c.totals.missing.length
      ? [
          '',
          `n/a — not counted by this local cloud, so left out of the totals: ${c.totals.missing.join(', ')}.`,
        ]
      : []),
  ].join('\n');
}

export function writeReport(dir: string, run: RunResult): string {
  const drawn = charts(dir, run);
  const img = (file: string, alt: string) => (drawn.has(file) ? [``, `![${alt}](${file})`] : []);
  const levels = run.levels.map((l) => l.metrics);
  const focus = highestSustained(run.levels);
  const p = run.profile;
  const lines: string[] = [
    `# Load report: ${p.name}`,
    '',
    `- Result: **${run.failures.length === 0 ? 'passed' : 'FAILED'}**${run.failures.map((f) => `\n  - ${f}`).join('')}`,
    `- Target: ${run.target.api}${run.target.awsEndpoint ? ` (local cloud; counters from ${run.target.awsEndpoint})` : ''}`,
    `- From ${run.startedAt} to ${run.finishedAt}, on ${run.machine}`,
    ...(run.cpuProbeMs
      ? [
          `- CPU probe (\`load/cpu-probe.ts\`, a fixed one-thread workload; the same code runs slower on a busier host, so compare runs by it): ${ms(run.cpuProbeMs.before)} ms before the run, ${ms(run.cpuProbeMs.after)} ms after`,
        ]
      : []),
    `- Workload: ${p.description}; each iteration one operation — place an order of 1–3 items ${p.weights.placeOrder}%, reserve one unit ${p.weights.reserveStock}%, create a customer ${p.weights.createCustomer}%; ${p.waitSeconds === undefined ? '' : `orders sent with \`Prefer: wait=${p.waitSeconds}\` (\`--wait\`); `}${Math.round(p.pollFraction * 100)}% of placed orders followed until final${p.waitSeconds === undefined ? '' : ' (from the answer when it is `201`, else by polling)'}, polled every ${p.pollIntervalMs} ms (limit ${p.sagaLimitSeconds} s); ${p.warmUpSeconds > 0 ? `a warm-up of ${p.warmUpSeconds} s at the first level's rate, not measured; ` : ''}${p.durationSeconds} s per level; ${run.seedCounts.customers} seeded customers, ${run.seedCounts.products} seeded products.`,
    `- Highest level sustained (no error, nothing dropped, achieved ≥ 95% of target): ${focus ? `**${focus.metrics.targetRate}/s**` : 'none'}`,
    ...(run.stoppedEarly
      ? [
          `- Levels run: ${levels.map((m) => m.targetRate).join(', ')}/s of ${p.levels.join(', ')}/s; ${run.stoppedEarly}.`,
        ]
      : []),
    '',
    '## Throughput',
    '',
    'Achieved = iterations completed without error per second of the level (an iteration answered after the level ended still counts; its latency shows it). Dropped = arrivals Artillery did not start (over its in-flight bound) or never created.',
    '',
    table(
      [
        'target it/s',
        'achieved it/s',
        'of target',
        'HTTP req/s',
        'created',
        'completed',
        'failed',
        'dropped',
        'errors',
        'sustained',
      ],
      levels.map((m) => [
        String(m.targetRate),
        num(m.achievedRate),
        `${num((m.achievedRate / m.targetRate) * 100, 0)}%`,
        num(m.httpRate),
        String(m.iterations.created),
        String(m.iterations.completed),
        String(m.iterations.failed),
        String(m.iterations.dropped),
        String(m.errors.total),
        sustained(m) ? 'yes' : 'no',
      ]),
    ),
    ...levels
      .filter((m) => m.errors.total > 0)
      .map(
        (m) =>
          `\nErrors at ${m.targetRate}/s: ${Object.entries(m.errors.byKind)
            .map(([k, n]) => `${k} × ${n}`)
            .join(', ')}`,
      ),
    ...img('achieved-vs-target.svg', 'achieved vs target'),
    '',
    '## Latency per operation (ms, time to first byte as Artillery measures it)',
    '',
    table(
      ['target it/s', 'operation', 'n', 'p50', 'p90', 'p95', 'p99', 'max'],
      levels.flatMap((m) =>
        ops.map((op) => [
          String(m.targetRate),
          `${op} (${OPERATIONS[op]})`,
          ...latencyCells(m.operations[op].latency),
        ]),
      ),
    ),
    ...img('p95-by-level.svg', 'p95 per operation by level'),
    '',
    '## Saga end to end',
    '',
    `From sending \`POST /orders\` to the first poll that sees the order CONFIRMED or CANCELLED (so it includes up to one poll interval, ${p.pollIntervalMs} ms)${p.waitSeconds === undefined ? '' : `, or, sent with \`Prefer: wait=${p.waitSeconds}\`, to the POST's own answer when it is \`201\` final (no poll; "answered final" counts those)`}. A followed saga not seen final within ${p.sagaLimitSeconds} s misses the limit.`,
    '',
    table(
      [
        'target it/s',
        'followed',
        'seen final',
        ...(p.waitSeconds === undefined ? [] : ['answered final']),
        'p50 ms',
        'p95 ms',
        'p99 ms',
        'max ms',
        `missed ${p.sagaLimitSeconds} s`,
        'outcomes',
      ],
      levels.map((m) => [
        String(m.targetRate),
        String(m.saga.followed),
        num(m.saga.endToEnd?.count, 0),
        ...(p.waitSeconds === undefined ? [] : [String(m.saga.answeredFinal ?? 0)]),
        ms(m.saga.endToEnd?.p50),
        ms(m.saga.endToEnd?.p95),
        ms(m.saga.endToEnd?.p99),
        ms(m.saga.endToEnd?.max),
        String(m.saga.missedLimit),
        Object.entries(m.saga.outcomes)
          .map(([k, n]) => `${k.replace('.', ' ')} ${n}`)
          .join(', ') || '—',
      ]),
    ),
    ...img('saga-by-level.svg', 'saga end to end by level'),
    '',
    '## Resources',
    '',
    resourcesSection(run, focus),
    '',
    '## Hot partition keys',
    '',
    hotKeysSection(run, focus),
    '',
    '## Cost per 10,000 transactions',
    '',
    costSection(run, focus),
    '',
    '## Invariants (checked through the API after the run)',
    '',
    `Orders placed by the run: ${run.invariants.orders.placed}; final outcomes: ${
      Object.entries(run.invariants.orders.outcomes)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || '—'
    }.`,
    '',
    table(
      ['invariant', 'checked', 'violations'],
      run.invariants.checks.map((c) => [c.name, String(c.checked), String(c.violations.length)]),
    ),
    ...run.invariants.checks
      .filter((c) => c.violations.length > 0)
      .map(
        (c) =>
          `\n${c.name}:\n${c.violations
            .slice(0, 10)
            .map((v) => `- ${v}`)
            .join('\n')}${c.violations.length > 10 ? `\n- … and ${c.violations.length - 10} more` : ''}`,
      ),
    ...(drawn.has('p95-over-time.svg') || drawn.has('memory-over-time.svg') ? ['', '## Over time'] : []),
    ...img('p95-over-time.svg', 'p95 over time'),
    ...img('memory-over-time.svg', 'memory over time'),
    '',
  ];
  const file = join(dir, 'report.md');
  writeFileSync(file, lines.join('\n'));
  writeFileSync(
    join(dir, 'summary.json'),
    `${JSON.stringify({ ...run, levels: run.levels.map(({ intermediate, ...l }) => l) }, null, 2)}\n`,
  );
  return file;
}
