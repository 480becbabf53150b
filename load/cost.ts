/**
 * What a run would cost on AWS: the local cloud's counters for one level,
 * priced with `prices.json`, per 10,000 transactions (iterations of the mix).
 * The counters are the same whichever workflow type the local stage runs;
 * only the Step Functions line differs: STANDARD bills state transitions,
 * EXPRESS bills requests and duration (64 MB chunks, 100 ms increments).
 *
 * A counter the local cloud does not report gives "n/a" for its line, and
 * the totals say they are partial.
 */
import prices from './prices.json';
import type { LocalStats } from './target';

export type Prices = typeof prices;
export const PRICES: Prices = prices;

export interface CostLine {
  readonly item: string;
  readonly unit: string;
  /** Per 10,000 transactions; undefined when the local cloud did not count it. */
  readonly quantity: number | undefined;
  readonly usd: number | undefined;
}

export interface CostModel {
  readonly transactions: number;
  readonly common: readonly CostLine[];
  readonly standard: readonly CostLine[];
  readonly express: readonly CostLine[];
  /** USD per 10,000 transactions, and the lines that were n/a (so the total is a lower bound). */
  readonly totals: {
    readonly STANDARD: number;
    readonly EXPRESS: number;
    readonly missing: readonly string[];
  };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const all = <T>(values: readonly (T | undefined)[]): values is readonly T[] =>
  values.every((v) => v !== undefined);

type PriceLine = (item: string, unit: string, total: number | undefined, usdPerUnit: number) => CostLine;

const million = 1e6;

export function costModel(stats: LocalStats, transactions: number, p: Prices = PRICES): CostModel {
  const per10k = (n: number | undefined) =>
    n === undefined || transactions === 0 ? undefined : (n / transactions) * 10_000;
  const line: PriceLine = (item, unit, total, usdPerUnit) => {
    const quantity = per10k(total);
    return { item, unit, quantity, usd: quantity === undefined ? undefined : quantity * usdPerUnit };
  };
  const common = commonLines(stats, p, line);
  const { standard, express } = stepFunctionsLines(stats, p, line);
  const total = (lines: readonly CostLine[]) => sum(lines.map((l) => l.usd ?? 0));
  return {
    transactions,
    common,
    standard,
    express,
    totals: {
      STANDARD: total([...common, ...standard]),
      EXPRESS: total([...common, ...express]),
      missing: [...common, ...standard, ...express].filter((l) => l.usd === undefined).map((l) => l.item),
    },
  };
}

/** The lines the same whichever workflow type: Lambda, the HTTP API, DynamoDB, EventBridge. */
function commonLines(stats: LocalStats, p: Prices, line: PriceLine): CostLine[] {
  const invocations = Object.values(stats.invocations ?? {});
  const gbSeconds = invocations.map((i) =>
    i.billedMs === undefined || i.memoryMb === undefined
      ? undefined
      : (i.billedMs / 1000) * (i.memoryMb / 1024),
  );
  const tables = Object.values(stats.dynamodb ?? {});
  const units = (pick: (t: (typeof tables)[number]) => number | undefined) => {
    const values = tables.map(pick);
    return stats.dynamodb && all(values) ? sum(values) : undefined;
  };
  return [
    line(
      'Lambda requests',
      'invocations',
      stats.invocations ? sum(invocations.map((i) => i.count)) : undefined,
      p.lambda.requestsPerMillion / million,
    ),
    line(
      'Lambda duration (arm64)',
      'GB-s',
      stats.invocations && all(gbSeconds) ? sum(gbSeconds) : undefined,
      p.lambda.arm64PerGbSecond,
    ),
    line(
      'HTTP API requests',
      'requests',
      stats.requests ? sum(Object.values(stats.requests).map((r) => r.count)) : undefined,
      p.httpApi.requestsPerMillion / million,
    ),
    line(
      'DynamoDB reads (on-demand)',
      'read request units',
      units((t) => (t.readUnits === undefined ? undefined : t.readUnits + (t.transactionalReadUnits ?? 0))),
      p.dynamodb.readRequestUnitsPerMillion / million,
    ),
    line(
      'DynamoDB writes (on-demand)',
      'write request units',
      units((t) =>
        t.writeUnits === undefined ? undefined : t.writeUnits + (t.transactionalWriteUnits ?? 0),
      ),
      p.dynamodb.writeRequestUnitsPerMillion / million,
    ),
    line(
      'EventBridge custom events',
      'events',
      stats.eventBridge?.events,
      p.eventBridge.customEventsPerMillion / million,
    ),
  ];
}

/** The Step Functions lines of each workflow type: STANDARD bills state transitions, EXPRESS requests and duration. */
function stepFunctionsLines(stats: LocalStats, p: Prices, line: PriceLine) {
  const sfn = stats.stepFunctions ?? {};
  const standard = [
    line(
      'Step Functions STANDARD',
      'state transitions',
      sfn.stateTransitions,
      p.stepFunctions.standardStateTransitionsPerMillion / million,
    ),
  ];
  const express = [
    line(
      'Step Functions EXPRESS requests',
      'executions',
      sfn.executions,
      p.stepFunctions.expressRequestsPerMillion / million,
    ),
    line(
      'Step Functions EXPRESS duration',
      `GB-s (${p.stepFunctions.expressMemoryMb} MB)`,
      sfn.billedExpressMs === undefined
        ? undefined
        : (sfn.billedExpressMs / 1000) * (p.stepFunctions.expressMemoryMb / 1024),
      p.stepFunctions.expressPerGbSecond,
    ),
  ];
  return { standard, express };
}
