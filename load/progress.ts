/**
 * Live progress of a long level: Artillery's console reporter prints the
 * metrics of every 10 s period as the run goes (a block that begins
 * "Metrics for period to: …"), which the wrapper sends to the level's log. This
 * reads those blocks from Artillery's output, line by line, and turns each
 * into one line of progress (requests, errors, p95), so that `npm run load --
 * soak` shows its progress during its 30 minutes, not only at the end.
 */

/** One period of Artillery's console report: its counters and its summaries' aggregations. */
export interface ConsolePeriod {
  /** As Artillery prints it, e.g. `20:17:40(+0000)`. */
  readonly to: string;
  /** The period's width in seconds. */
  readonly widthSeconds: number;
  readonly counters: Readonly<Record<string, number>>;
  readonly summaries: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

const PERIOD = /^Metrics for period to: (\S+) \(width: ([\d.]+)s\)$/;
const METRIC = /^(\S[^:]*): \.+ (\S+)$/;
const SUMMARY = /^(\S[^:]*):$/;
const AGGREGATION = /^ {2}(\w+): \.+ (\S+)$/;

/** Feeds Artillery's output, line by line; calls `onPeriod` with each period as its block ends. */
export function consolePeriods(onPeriod: (period: ConsolePeriod) => void) {
  let current:
    | {
        to: string;
        widthSeconds: number;
        counters: Record<string, number>;
        summaries: Record<string, Record<string, number>>;
      }
    | undefined;
  let summary: string | undefined;
  let seen = false;
  const end = () => {
    if (current && seen) onPeriod(current);
    current = undefined;
    summary = undefined;
    seen = false;
  };
  return {
    line(text: string) {
      const line = text.replace(/\s+$/, '');
      const period = PERIOD.exec(line);
      if (period) {
        end();
        current = { to: period[1]!, widthSeconds: Number(period[2]), counters: {}, summaries: {} };
        return;
      }
      if (!current) return;
      if (line === '' || /^-+$/.test(line)) {
        // A blank line or a separator after a block's metrics ends it (those around its header do not).
        if (seen) end();
        return;
      }
      const aggregation = AGGREGATION.exec(line);
      if (aggregation && summary) {
        const value = Number(aggregation[2]);
        if (Number.isFinite(value)) current.summaries[summary]![aggregation[1]!] = value;
        seen = true;
        return;
      }
      const metric = METRIC.exec(line);
      if (metric) {
        summary = undefined;
        // A rate reads "3/sec": its number.
        const value = Number.parseFloat(metric[2]!);
        if (Number.isFinite(value)) current.counters[metric[1]!] = value;
        seen = true;
        return;
      }
      const header = SUMMARY.exec(line);
      if (header) {
        summary = header[1]!;
        current.summaries[summary] = {};
        return;
      }
      // Anything else (a phase starting, a separator, the summary report's header) ends the block.
      end();
    },
    /** Artillery's output ended: a block still open is complete. */
    end,
  };
}

/** The period as one line: requests, their rate, errors by kind and failed virtual users, latency. */
export function progressLine(period: ConsolePeriod): string {
  const c = period.counters;
  const errors = Object.entries(c).filter(([name]) => name.startsWith('errors.'));
  const errorCount = errors.reduce((sum, [, n]) => sum + n, 0);
  const latency = period.summaries['http.response_time'];
  const saga = period.summaries['saga.end_to_end'];
  return [
    `${period.to}: ${c['http.requests'] ?? 0} requests in ${period.widthSeconds.toFixed(0)} s`,
    `${errorCount} errors${errors.length ? ` (${errors.map(([k, n]) => `${k.slice('errors.'.length)} × ${n}`).join(', ')})` : ''}`,
    `${c['vusers.failed'] ?? 0} failed`,
    `p95 ${latency?.p95 ?? 'n/a'} ms`,
    ...(saga ? [`saga p95 ${saga.p95 ?? 'n/a'} ms`] : []),
  ].join(', ');
}
