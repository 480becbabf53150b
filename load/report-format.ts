/** How the load report writes numbers, money, tables and latency cells in Markdown. */
import type { Summary } from './artillery';
import { OPERATIONS, type Operation } from './profiles';

export const ms = (n: number | undefined) =>
  n === undefined ? 'n/a' : n >= 100 ? n.toFixed(0) : n.toFixed(1);
export const num = (n: number | undefined, digits = 1) =>
  n === undefined
    ? 'n/a'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
export const usd = (n: number | undefined) =>
  n === undefined ? 'n/a' : `$${n < 0.01 ? n.toFixed(5) : n.toFixed(4)}`;
export const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
export const ops = Object.keys(OPERATIONS) as Operation[];
export const latencyCells = (s: Summary | undefined) => [
  num(s?.count, 0),
  ms(s?.p50),
  ms(s?.p90),
  ms(s?.p95),
  ms(s?.p99),
  ms(s?.max),
];
