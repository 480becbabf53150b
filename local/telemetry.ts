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

/**
 * What the local cloud counts while it runs: requests and their latency per
 * route, invocations and billed duration per function, and DynamoDB writes
 * per table and per partition key (the hot-key meter).
 */
export class Telemetry {
  private requests = new Map<string, Counter & { statuses: Record<string, number> }>();
  private invocations = new Map<string, Counter & { billedMs: number; errors: number }>();
  private writes = new Map<string, { operations: Record<string, number>; keys: Map<string, number> }>();
  private reads = new Map<string, Record<string, number>>();
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
    }));
    c.count++;
    if (c.samples.length < MAX_SAMPLES) c.samples.push(r.durationMs);
    c.billedMs += Math.max(1, Math.ceil(r.durationMs));
    if (!r.ok) c.errors++;
  }

  write(operation: string, input: Record<string, unknown>) {
    for (const [table, key] of keysWritten(operation, input, this.tables)) {
      const t = entry(this.writes, table, () => ({
        operations: {} as Record<string, number>,
        keys: new Map<string, number>(),
      }));
      t.operations[operation] = (t.operations[operation] ?? 0) + 1;
      if (key !== undefined) t.keys.set(key, (t.keys.get(key) ?? 0) + 1);
    }
  }

  read(tableNames: readonly string[], operation: string) {
    for (const table of tableNames) {
      const t = entry(this.reads, table, () => ({}) as Record<string, number>);
      t[operation] = (t[operation] ?? 0) + 1;
    }
  }

  reset() {
    this.reads.clear();
    this.requests.clear();
    this.invocations.clear();
    this.writes.clear();
    this.since = Date.now();
  }

  snapshot() {
    const seconds = Math.max(0.001, (Date.now() - this.since) / 1000);
    return {
      seconds,
      requests: Object.fromEntries(
        [...this.requests].map(([route, c]) => [route, { ...summarize(c), statuses: c.statuses }]),
      ),
      invocations: Object.fromEntries(
        [...this.invocations].map(([fn, c]) => [
          fn,
          { ...summarize(c), billedMs: c.billedMs, errors: c.errors },
        ]),
      ),
      reads: Object.fromEntries(this.reads),
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
            },
          ];
        }),
      ),
    };
  }
}

/** Each (table, partition key value) a write touches; DynamoDB JSON values are read as strings. */
function keysWritten(
  operation: string,
  input: Record<string, unknown>,
  tables: ReadonlyMap<string, LocalTable>,
): [string, string | undefined][] {
  const keyOf = (table: string, item: Record<string, Record<string, string>> | undefined) => {
    const name = tables.get(table)?.partitionKey;
    const value = name && item?.[name];
    return value ? String(Object.values(value)[0]) : undefined;
  };
  type Op = { TableName: string; Item?: never; Key?: never } & Record<string, unknown>;
  switch (operation) {
    case 'PutItem':
      return [[String(input.TableName), keyOf(String(input.TableName), input.Item as never)]];
    case 'UpdateItem':
    case 'DeleteItem':
      return [[String(input.TableName), keyOf(String(input.TableName), input.Key as never)]];
    case 'TransactWriteItems':
      return ((input.TransactItems as Record<string, Op>[]) ?? []).flatMap((item) =>
        Object.entries(item)
          .filter(([kind]) => kind !== 'ConditionCheck')
          .map(([, op]): [string, string | undefined] => [
            op.TableName,
            keyOf(op.TableName, (op.Item ?? op.Key) as never),
          ]),
      );
    case 'BatchWriteItem':
      return Object.entries(
        (input.RequestItems as Record<string, Record<string, { Item?: never; Key?: never }>[]>) ?? {},
      ).flatMap(([table, requests]) =>
        requests.map((r): [string, string | undefined] => [
          table,
          keyOf(table, (r.PutRequest?.Item ?? r.DeleteRequest?.Key) as never),
        ]),
      );
    default:
      return [];
  }
}
