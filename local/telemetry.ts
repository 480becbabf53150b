import { type ItemWrite, itemWrites } from './capacity';
import type { RequestRecord } from './http-api';
import type { InvocationRecord } from './lambda/runtime';
import type { LocalTable } from './tables';

const MAX_SAMPLES = 100_000;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Counter {
  count: number;
  samples: number[];
}

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

const summarize = (c: Counter) => {
  const sorted = [...c.samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    count: c.count,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? 0),
  };
};

interface TableWrites {
  operations: Record<string, number>;
  keys: Map<string, number>;
  /**
   * Writes per key of the seconds not yet folded into the peaks. Sandboxes
   * report their writes once per invocation, stamped with the second they
   * happened in, so a second stays open a while for late reports.
   */
  seconds: Map<number, SecondWrites>;
  /** The second with the most writes on one key. */
  peakKeySecond?: SecondPeak;
  /** The second with the most writes to the table, and its hottest key. */
  busiestSecond?: SecondPeak;
}

interface SecondWrites {
  keys: Map<string, number>;
  writes: number;
}

/** How long a second's writes are kept open for late reports before they are folded into the peaks. */
const OPEN_SECONDS = 30;
interface SecondPeak {
  second: string;
  writes: number;
  hottestKey: { key: string; writes: number; share: number };
}

interface Units {
  readUnits: number;
  writeUnits: number;
  transactionalReadUnits: number;
  transactionalWriteUnits: number;
}

/** A second's peak: its writes and its hottest key. */
function peakOf(second: number, w: SecondWrites): SecondPeak {
  let key = '';
  let most = 0;
  for (const [k, n] of w.keys) {
    if (n > most) [key, most] = [k, n];
  }
  return {
    second: new Date(second * 1000).toISOString(),
    writes: w.writes,
    hottestKey: { key, writes: most, share: most / w.writes },
  };
}

/** The peaks of `t` with `peak` (one more second) taken into account. */
function withPeak(
  peaks: Pick<TableWrites, 'peakKeySecond' | 'busiestSecond'>,
  peak: SecondPeak,
): Pick<TableWrites, 'peakKeySecond' | 'busiestSecond'> {
  const { peakKeySecond, busiestSecond } = peaks;
  return {
    peakKeySecond:
      !peakKeySecond || peak.hottestKey.writes > peakKeySecond.hottestKey.writes ? peak : peakKeySecond,
    busiestSecond: !busiestSecond || peak.writes > busiestSecond.writes ? peak : busiestSecond,
  };
}

/** Folds the seconds older than `before` into the table's peaks. */
function closeSeconds(t: TableWrites, before: number) {
  for (const [second, w] of t.seconds) {
    if (second >= before) continue;
    t.seconds.delete(second);
    if (w.writes === 0) continue;
    Object.assign(t, withPeak(t, peakOf(second, w)));
  }
}

/**
 * What the local cloud counts while it runs: requests and their latency per
 * route, invocations and billed duration per function, DynamoDB request
 * units per table as AWS would bill them on demand, and writes per table and
 * partition key, overall and per second (the hot-key meter).
 */
export class Telemetry {
  private requests = new Map<
    string,
    Counter & { statuses: Record<string, number>; refused: number; refusedBy: Record<string, number> }
  >();
  private invocations = new Map<string, Counter & { billedMs: number; errors: number; memoryMb: number }>();
  private writes = new Map<string, TableWrites>();
  private reads = new Map<string, Record<string, number>>();
  private units = new Map<string, Units>();
  private since = Date.now();

  constructor(private readonly tables: ReadonlyMap<string, LocalTable>) {}

  request(r: RequestRecord) {
    const c = entry(this.requests, r.routeKey, () => ({
      count: 0,
      samples: [],
      statuses: {},
      refused: 0,
      refusedBy: {} as Record<string, number>,
    }));
    c.count++;
    if (r.refused) {
      c.refused++;
      c.refusedBy[r.refused] = (c.refusedBy[r.refused] ?? 0) + 1;
    }
    if (c.samples.length < MAX_SAMPLES) c.samples.push(r.durationMs);
    c.statuses[r.status] = (c.statuses[r.status] ?? 0) + 1;
  }

  invocation(r: InvocationRecord) {
    const c = entry(this.invocations, r.functionName, () => ({
      count: 0,
      samples: [],
      billedMs: 0,
      errors: 0,
      memoryMb: r.memoryMb,
    }));
    c.count++;
    if (c.samples.length < MAX_SAMPLES) c.samples.push(r.durationMs);
    c.billedMs += Math.max(1, Math.ceil(r.durationMs));
    if (!r.ok) c.errors++;
  }

  private tableUnits(table: string) {
    return entry(this.units, table, () => ({
      readUnits: 0,
      writeUnits: 0,
      transactionalReadUnits: 0,
      transactionalWriteUnits: 0,
    }));
  }

  /** A write the local AWS endpoint served (any caller's: a function's, a test's, a load tool's). */
  write(operation: string, input: Record<string, unknown>) {
    const second = Math.floor(Date.now() / 1000);
    const writes = itemWrites(operation, input, (table) => this.tables.get(table)?.partitionKey);
    for (const w of writes) this.countWrite(operation, w, second);
  }

  private countWrite(operation: string, w: ItemWrite, second: number) {
    const u = this.tableUnits(w.table);
    if (w.transactional) u.transactionalWriteUnits += w.units;
    else u.writeUnits += w.units;
    if (w.key === undefined) return;
    const t = entry(this.writes, w.table, () => ({
      operations: {} as Record<string, number>,
      keys: new Map<string, number>(),
      seconds: new Map<number, SecondWrites>(),
    }));
    t.operations[operation] = (t.operations[operation] ?? 0) + 1;
    t.keys.set(w.key, (t.keys.get(w.key) ?? 0) + 1);
    let s = t.seconds.get(second);
    if (!s) {
      s = { keys: new Map(), writes: 0 };
      t.seconds.set(second, s);
      closeSeconds(t, second - OPEN_SECONDS);
    }
    s.keys.set(w.key, (s.keys.get(w.key) ?? 0) + 1);
    s.writes++;
  }

  /** A read the DynamoDB engine served: its units per table, as DynamoDB reports them. */
  read(unitsByTable: ReadonlyMap<string, number>, operation: string) {
    for (const [table, units] of unitsByTable) this.countRead(operation, table, units);
  }

  private countRead(operation: string, table: string, units: number) {
    const t = entry(this.reads, table, () => ({}) as Record<string, number>);
    t[operation] = (t[operation] ?? 0) + 1;
    const u = this.tableUnits(table);
    if (operation === 'TransactGetItems') u.transactionalReadUnits += units;
    else u.readUnits += units;
  }

  reset() {
    this.reads.clear();
    this.requests.clear();
    this.invocations.clear();
    this.writes.clear();
    this.units.clear();
    this.since = Date.now();
  }

  snapshot() {
    const seconds = Math.max(0.001, (Date.now() - this.since) / 1000);
    const now = Math.floor(Date.now() / 1000);
    return {
      seconds,
      requests: Object.fromEntries(
        // `refused`: of the 429s, those admission control answered (by reason in `refusedBy`).
        [...this.requests].map(([route, c]) => [
          route,
          { ...summarize(c), statuses: c.statuses, refused: c.refused, refusedBy: c.refusedBy },
        ]),
      ),
      invocations: Object.fromEntries(
        [...this.invocations].map(([fn, c]) => [
          fn,
          { ...summarize(c), billedMs: c.billedMs, errors: c.errors, memoryMb: c.memoryMb },
        ]),
      ),
      reads: Object.fromEntries(this.reads),
      dynamodb: Object.fromEntries(this.units),
      writes: Object.fromEntries(
        [...this.writes].map(([table, t]) => {
          const total = [...t.keys.values()].reduce((a, b) => a + b, 0);
          const hottest = [...t.keys].sort((a, b) => b[1] - a[1]).slice(0, 5);
          // The seconds still open count too, but not the current one: it is not over.
          let peaks: Pick<TableWrites, 'peakKeySecond' | 'busiestSecond'> = t;
          for (const [second, w] of t.seconds) {
            if (second < now && w.writes > 0) peaks = withPeak(peaks, peakOf(second, w));
          }
          return [
            table,
            {
              operations: t.operations,
              itemWrites: total,
              distinctKeys: t.keys.size,
              hottestKeys: hottest.map(([key, n]) => ({ key, writes: n, share: total ? n / total : 0 })),
              peakKeySecond: peaks.peakKeySecond,
              busiestSecond: peaks.busiestSecond,
            },
          ];
        }),
      ),
    };
  }
}
