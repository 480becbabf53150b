/** The load report's longer sections: the resources the run used, its hot keys, and what it would cost. */
import { type CostLine, type CostModel, PRICES } from './cost';
import type { LevelResult, RunResult } from './report';
import { ms, num, table, usd } from './report-format';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: it is three tables of counters, their columns listed in order.
export function resourcesSection(run: RunResult, focus: LevelResult | undefined) {
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
export function hotKeysSection(run: RunResult, focus: LevelResult | undefined) {
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

export function costSection(run: RunResult, focus: LevelResult | undefined) {
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
