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
  /** The current second's writes per key, folded into the peaks when the second ends. */
  second: number;
  secondKeys: Map<string, number>;
  secondWrites: number;
  /** The second with the most writes on one key. */
  peakKeySecond?: SecondPeak;
  /** The second with the most writes to the table, and its hottest key. */
  busiestSecond?: SecondPeak;
}

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

/** Folds a finished second into the table's peaks. */
function closeSecond(t: TableWrites) {
  if (t.secondWrites === 0) return;
  let key = '';
  let most = 0;
  for (const [k, n] of t.secondKeys) {
    if (n > most) [key, most] = [k, n];
  }
  const peak: SecondPeak = {
    second: new Date(t.second * 1000).toISOString(),
    writes: t.secondWrites,
    hottestKey: { key, writes: most, share: most / t.secondWrites },
  };
  if (!t.peakKeySecond || most > t.peakKeySecond.hottestKey.writes) t.peakKeySecond = peak;
  if (!t.busiestSecond || t.secondWrites > t.busiestSecond.writes) t.busiestSecond = peak;
  t.secondKeys = new Map();
  t.secondWrites = 0;
}

/**
 * What the local cloud counts while it runs: requests and their latency per
 * route, invocations and billed duration per function, DynamoDB request
 * units per table as AWS would bill them on demand, and writes per table and
 * partition key, overall and per second (the hot-key meter).
 */
export class Telemetry {
  private requests = new Map<string, Counter & { statuses: Record<string, number> }>();
  private invocations = new Map<string, Counter & { billedMs: number; errors: number; memoryMb: number }>();
  private writes = new Map<string, TableWrites>();
  private reads = new Map<string, Record<string, number>>();
  private units = new Map<string, Units>();
  private since = Date.now();

  constructor(private readonly tables: ReadonlyMap<string, LocalTable>) {}

  request(r: RequestRecord) {
    const c = entry(this.requests, r.routeKey, () => ({ count: 0, samples: [], statuses: {} }));
    c.count++;
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
      second,
      secondKeys: new Map<string, number>(),
      secondWrites: 0,
    }));
    if (second !== t.second) {
      closeSecond(t);
      t.second = second;
    }
    t.operations[operation] = (t.operations[operation] ?? 0) + 1;
    t.keys.set(w.key, (t.keys.get(w.key) ?? 0) + 1);
    t.secondKeys.set(w.key, (t.secondKeys.get(w.key) ?? 0) + 1);
    t.secondWrites++;
  }

  read(unitsByTable: ReadonlyMap<string, number>, operation: string) {
    const transactional = operation === 'TransactGetItems';
    for (const [table, units] of unitsByTable) {
      const t = entry(this.reads, table, () => ({}) as Record<string, number>);
      t[operation] = (t[operation] ?? 0) + 1;
      const u = this.tableUnits(table);
      if (transactional) u.transactionalReadUnits += units;
      else u.readUnits += units;
    }
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
    for (const t of this.writes.values()) {
      if (t.second !== now) {
        closeSecond(t);
        t.second = now;
      }
    }
    return {
      seconds,
      requests: Object.fromEntries(
        [...this.requests].map(([route, c]) => [route, { ...summarize(c), statuses: c.statuses }]),
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
          return [
            table,
            {
              operations: t.operations,
              itemWrites: total,
              distinctKeys: t.keys.size,
              hottestKeys: hottest.map(([key, n]) => ({ key, writes: n, share: total ? n / total : 0 })),
              peakKeySecond: t.peakKeySecond,
              busiestSecond: t.busiestSecond,
            },
          ];
        }),
      ),
    };
  }
}
