/** The run's report: `report.md` with SVG charts and `summary.json`, written from what the run measured. */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { type ArtilleryPeriod, type LevelMetrics, sustained } from './artillery';
import { type CostModel } from './cost';
import type { InvariantReport } from './invariants';
import { OPERATIONS, type Profile } from './profiles';
import { charts } from './report-charts';
import { latencyCells, ms, num, ops, table } from './report-format';
import { costSection, hotKeysSection, resourcesSection } from './report-sections';
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

/** The level the report calls the highest sustained: every level up to it sustained too. */
export function highestSustained(levels: readonly LevelResult[]) {
  let best: LevelResult | undefined;
  for (const level of levels) {
    if (!sustained(level.metrics)) break;
    best = level;
  }
  return best;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: it is the report's Markdown in reading order, one short block per section.
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
