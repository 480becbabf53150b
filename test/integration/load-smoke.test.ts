import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INVARIANT_OPTIONS } from '../../load/invariants';
import { PROFILES } from '../../load/profiles';
import { runProfile } from '../../load/run';
import type { TableWrites } from '../../load/target';
import { apiUrl, awsEndpoint } from '../support/api';

describe('load: the smoke profile', () => {
  test('runs with Artillery against the local cloud with no error, and every invariant holds after it', async () => {
    const lines: string[] = [];
    const outcome = await runProfile({
      profile: PROFILES.smoke,
      target: { api: apiUrl(), awsEndpoint: awsEndpoint() },
      outDir: mkdtempSync(join(tmpdir(), 'load-smoke-')),
      invariants: DEFAULT_INVARIANT_OPTIONS,
      log: (line) => lines.push(line),
    });
    // The failures name what went wrong; the report and Artillery's log are in outcome.dir.
    expect({ failures: outcome.failures, dir: outcome.dir }).toEqual({ failures: [], dir: outcome.dir });
    expect(outcome.ok).toBe(true);

    const summary = JSON.parse(readFileSync(join(outcome.dir, 'summary.json'), 'utf8'));
    const [level] = summary.levels;
    expect(level.metrics.iterations).toMatchObject({ created: 25, completed: 25, failed: 0, dropped: 0 });
    expect(level.metrics.errors.total).toBe(0);
    // Every placed order was followed to its end, and the checks read every one of them.
    expect(level.metrics.saga.followed).toBeGreaterThan(0);
    expect((level.metrics.saga.endToEnd?.count ?? 0) + level.metrics.saga.missedLimit).toBeGreaterThanOrEqual(
      level.metrics.saga.followed,
    );
    expect(summary.invariants.orders.placed).toBe(level.metrics.saga.followed);
    for (const check of summary.invariants.checks) expect(check.checked).toBeGreaterThan(0);
    // The local cloud's counters were read for the level, so the cost has its Step Functions lines.
    expect(level.stats.stepFunctions.executions).toBeGreaterThanOrEqual(level.metrics.saga.followed);
    expect(level.cost.totals.STANDARD).toBeGreaterThan(level.cost.totals.EXPRESS);
    const report = readFileSync(outcome.reportFile, 'utf8');
    expect(report).toContain('Result: **passed**');
    // The hot-key meter counted the level's writes, and the report names each table's hottest key.
    const [, inventoryEvents] = Object.entries<TableWrites>(level.stats.writes).find(([table]) =>
      table.startsWith('InventoryEventsTable'),
    )!;
    expect(inventoryEvents.itemWrites).toBeGreaterThan(0);
    const hottest = inventoryEvents.hottestKeys[0]!;
    expect(hottest.share).toBeGreaterThan(0);
    const hotKeys = report.slice(report.indexOf('## Hot partition keys'));
    const row = hotKeys.split('\n').find((line) => line.startsWith('| InventoryEventsTable |'));
    expect(row).toContain(hottest.key.slice(0, 37));
  }, 90_000);
});
