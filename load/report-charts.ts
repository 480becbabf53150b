/** The load report's SVG charts, drawn from what the run measured. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ArtilleryPeriod } from './artillery';
import { lineChart } from './charts';
import type { MemorySample, RunResult } from './report';
import { ops } from './report-format';

/** Draws the run's charts into `dir`; returns the names of the files drawn. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: it draws the report's charts one after another, each a short block.
export function charts(dir: string, run: RunResult) {
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
