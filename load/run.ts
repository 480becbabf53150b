/**
 * Runs a profile against a target: seed (or read a seed file), read the
 * baseline, run each level with Artillery (the local cloud's counters reset
 * before it and read after it), check the invariants, write the report.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artilleryScript, LOAD_DIR, levelMetrics, runArtillery, sustained } from './artillery';
import { costModel } from './cost';
import { cpuProbe } from './cpu-probe';
import { checkInvariants, type InvariantOptions, type InvariantReport, readBaseline } from './invariants';
import { ordersOfLedger } from './ledger';
import type { LedgerLine, ReservationLine } from './processor';
import type { Profile } from './profiles';
import { type ConsolePeriod, progressLine } from './progress';
import { type LevelResult, type MemorySample, machine, writeReport } from './report';
import { DEFAULT_SEED, readSeed, type Seed, seed, writeSeed } from './seed';
import { localMemory, localStats, mapPool, request, resetLocalStats, sleep, type Target } from './target';
import { bearer, tokensFor } from './tokens';

/** A level longer than this (the soak's 30 minutes) prints its progress every 10 s while it runs. */
export const PROGRESS_AFTER_SECONDS = 60;

export interface RunOptions {
  readonly profile: Profile;
  readonly target: Target;
  /** Where the report goes; default load/out/<profile>-<time>. */
  readonly outDir?: string;
  /** A seed file written by `npm run seed`; without one the run seeds its own data. */
  readonly seedFile?: string;
  readonly invariants: InvariantOptions;
  readonly log?: (line: string) => void;
  /** Awaited as each level's load starts, after the seeding (`npm run chaos` puts its fault in force here). */
  readonly onLevelStart?: (rate: number) => Promise<void> | void;
  /**
   * Awaited as each level's load ends, before the level's counters are read (`npm run chaos` waits here
   * for a crashed cloud to be back).
   */
  readonly onLevelEnd?: (rate: number) => Promise<void> | void;
  /** Awaited after the load, before the invariants are checked (`npm run chaos` lets its fault run out, then lifts it). */
  readonly beforeInvariants?: () => Promise<void>;
}

export interface RunOutcome {
  readonly ok: boolean;
  readonly dir: string;
  readonly reportFile: string;
  readonly failures: readonly string[];
  readonly invariants: InvariantReport;
  /** Every order the run placed, with its id (those answered, and those recovered by their Idempotency-Key). */
  readonly orders: readonly (LedgerLine & { readonly orderId: string })[];
  /** The seed the run used (its customers and products). */
  readonly seed: Seed;
  /** The local cloud's counters of each level, read once its sagas had finished. */
  readonly levels: readonly LevelResult[];
}

/** Reads the counters once the sagas the level started have finished (at most 30 s later). */
async function statsAfterLevel(target: Target) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stats = await localStats(target);
    if (!stats || stats.stepFunctions?.running === 0 || Date.now() > deadline) return stats;
    await sleep(250);
  }
}

export async function runProfile(options: RunOptions): Promise<RunOutcome> {
  const { profile, target } = options;
  const log = options.log ?? ((line: string) => console.log(line));
  const startedAt = new Date();
  const dir =
    options.outDir ??
    join(LOAD_DIR, 'out', `${profile.name}-${startedAt.toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });

  let data: Seed;
  if (options.seedFile) {
    data = readSeed(options.seedFile);
    log(`seed: ${options.seedFile} (${data.customers.length} customers, ${data.products.length} products)`);
  } else {
    data = await seed(target, { ...DEFAULT_SEED, ...profile.seed });
    log(`seeded ${data.customers.length} customers and ${data.products.length} products`);
  }
  writeSeed(join(dir, 'seed.json'), data);
  // Each seeded customer acts with its own shop token; the checks and the seeding with the operator's.
  const tokens = tokensFor(target);
  const tokenOf = new Map(
    await mapPool(
      data.customers,
      8,
      async (c) => [c.customerId, await (c.sub ? tokens.shop(c.sub) : tokens.admin())] as const,
    ),
  );
  const adminToken = await tokens.admin();
  const baseline = await readBaseline(target, data);
  // Taken with the target idle, before the load and after its invariants are checked.
  const probeBefore = cpuProbe().ms;

  const ledgerFile = join(dir, 'orders.jsonl');
  writeFileSync(ledgerFile, '');
  const reservationsFile = join(dir, 'reservations.jsonl');
  writeFileSync(reservationsFile, '');
  const memory: MemorySample[] = [];
  const levels: LevelResult[] = [];
  const failures: string[] = [];
  let stoppedEarly: string | undefined;
  /**
   * Runs the mix at `rate` for `seconds` with Artillery; its orders go to the ledger. A run longer than
   * PROGRESS_AFTER_SECONDS (a soak) logs a line of progress for each 10 s period as it goes.
   */
  const runMix = (name: string, rate: number, seconds: number) => {
    const started = Date.now();
    const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
    const onPeriod =
      seconds > PROGRESS_AFTER_SECONDS
        ? (period: ConsolePeriod) =>
            log(`  [${clock((Date.now() - started) / 1000)} of ${clock(seconds)}] ${progressLine(period)}`)
        : undefined;
    return runArtillery({
      dir,
      name,
      script: artilleryScript({ ...profile, durationSeconds: seconds }, rate, target.api),
      settings: {
        customers: data.customers.map((c) => ({
          customerId: c.customerId,
          token: tokenOf.get(c.customerId)!,
        })),
        adminToken,
        ...(tokens.kind === 'local' && target.awsEndpoint
          ? { tokenEndpoint: `${target.awsEndpoint}/_local/token` }
          : {}),
        productIds: data.products.map((p) => p.productId),
        pollFraction: profile.pollFraction,
        pollIntervalMs: profile.pollIntervalMs,
        sagaLimitMs: profile.sagaLimitSeconds * 1000,
        ledgerFile,
        reservationsFile,
        ...(profile.waitSeconds === undefined ? {} : { waitSeconds: profile.waitSeconds }),
      },
      durationSeconds: seconds,
      sagaLimitSeconds: profile.sagaLimitSeconds,
      ...(profile.waitSeconds === undefined ? {} : { waitSeconds: profile.waitSeconds }),
      ...(onPeriod ? { onPeriod } : {}),
    });
  };
  const [firstRate] = profile.levels;
  if (profile.warmUpSeconds > 0 && firstRate !== undefined) {
    log(`warm-up: ${firstRate}/s for ${profile.warmUpSeconds} s (not measured)`);
    try {
      await runMix('warm-up', firstRate, profile.warmUpSeconds);
    } catch (error) {
      log(`  the warm-up did not complete: ${(error as Error).message}`);
    }
    // What the warm-up started ends before the first level is measured.
    await statsAfterLevel(target);
  }
  for (const rate of profile.levels) {
    if (stoppedEarly) break;
    await resetLocalStats(target);
    const levelStart = Date.now();
    const sampler =
      profile.sampleEverySeconds && target.awsEndpoint
        ? setInterval(() => {
            localMemory(target)
              .then((m) => {
                if (!m) return;
                memory.push({
                  secondsFromStart: (Date.now() - levelStart) / 1000,
                  rssMb: m.rssMb,
                  mainHeapMb: m.mainHeapMb,
                  functionsHeapMb: Object.values(m.functions).reduce((a, f) => a + f.heapUsedMb, 0),
                });
              })
              .catch((error: Error) => log(`memory sample failed: ${error.message}`));
          }, profile.sampleEverySeconds * 1000)
        : undefined;
    log(`${profile.name}: ${rate}/s for ${profile.durationSeconds} s against ${target.api}`);
    await options.onLevelStart?.(rate);
    let report: Awaited<ReturnType<typeof runArtillery>>;
    try {
      report = await runMix(`level-${rate}`, rate, profile.durationSeconds);
    } catch (error) {
      // Still check the invariants and write the report for the levels that ran.
      failures.push(`level ${rate}/s did not complete: ${(error as Error).message}`);
      break;
    } finally {
      if (sampler) clearInterval(sampler);
    }
    await options.onLevelEnd?.(rate);
    const stats = await statsAfterLevel(target);
    const metrics = levelMetrics(report.aggregate, rate, profile.durationSeconds, profile.waitSeconds);
    levels.push({
      metrics,
      stats,
      cost: stats ? costModel(stats, metrics.iterations.completed) : undefined,
      intermediate: report.intermediate,
    });
    log(
      `  achieved ${metrics.achievedRate.toFixed(1)} it/s, ${metrics.httpRate.toFixed(1)} req/s, ` +
        `${metrics.errors.total} errors, ${metrics.iterations.dropped} dropped, saga p95 ${metrics.saga.endToEnd?.p95 ?? 'n/a'} ms` +
        `${sustained(metrics) ? '' : ' (not sustained)'}`,
    );
    if (metrics.achievedRate < 0.5 * rate && rate !== profile.levels.at(-1)) {
      // Higher levels would only measure the overload again, for longer, on a machine already saturated.
      stoppedEarly = `the ramp stopped after ${rate}/s: it achieved under half its target`;
      log(`  ${stoppedEarly}`);
    }
    if (profile.failOnError) {
      if (metrics.errors.total > 0)
        failures.push(
          `${metrics.errors.total} errors at ${rate}/s: ${Object.entries(metrics.errors.byKind)
            .map(([k, n]) => `${k} × ${n}`)
            .join(', ')}`,
        );
      if (metrics.iterations.dropped > 0)
        failures.push(`${metrics.iterations.dropped} iterations dropped at ${rate}/s`);
    }
  }

  if (options.beforeInvariants) {
    try {
      await options.beforeInvariants();
    } catch (error) {
      failures.push(`before the invariants: ${(error as Error).message}`);
    }
  }
  log('checking invariants');
  const ledgerLines = existsSync(ledgerFile)
    ? readFileSync(ledgerFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LedgerLine)
    : [];
  let invariants: Awaited<ReturnType<typeof checkInvariants>>;
  let orders: (LedgerLine & { orderId: string })[] = [];
  try {
    const { ledger, recovered } = await recoverUnanswered(target, ledgerLines, tokenOf);
    orders = ledger;
    if (recovered > 0)
      log(`recovered ${recovered} orders placed without an answer seen, by their Idempotency-Key`);
    const reservations = readFileSync(reservationsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ReservationLine);
    invariants = await checkInvariants(target, data, baseline, ledger, options.invariants, reservations);
  } catch (error) {
    // A target still working off the load's backlog may not answer: that fails the run, with its report.
    failures.push(`the invariants could not be checked: ${(error as Error).message}`);
    invariants = { ok: false, checks: [], orders: { placed: ledgerLines.length, outcomes: {} } };
  }
  for (const check of invariants.checks)
    if (check.violations.length)
      failures.push(`invariant broken (${check.violations.length}×): ${check.name}`);

  const reportFile = writeReport(dir, {
    profile,
    target,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machine(),
    cpuProbeMs: { before: probeBefore, after: cpuProbe().ms },
    seedCounts: { customers: data.customers.length, products: data.products.length },
    levels,
    invariants,
    memory,
    failures,
    ...(stoppedEarly ? { stoppedEarly } : {}),
  });
  return { ok: failures.length === 0, dir, reportFile, failures, invariants, orders, seed: data, levels };
}

/**
 * Every order the run sent, with its id. An order whose answer the client did
 * not see (its request timed out) may still have been placed: the same
 * request is sent again with the same Idempotency-Key, which the platform
 * answers with the first response (placing it now if it never arrived), so
 * the invariants account for every order the platform holds.
 */
async function recoverUnanswered(
  target: Target,
  lines: readonly LedgerLine[],
  tokenOf: ReadonlyMap<string, string>,
) {
  const { placed, unanswered } = ordersOfLedger(lines);
  const recovered = await mapPool(unanswered, 8, async (line) => {
    const body = { customerId: line.customerId, items: line.items };
    for (let attempt = 1; attempt <= 10; attempt++) {
      // Idempotency keys belong to the caller: the order's own customer sends it again.
      const answer = await request<{ orderId?: string }>(target, 'POST', '/orders', body, {
        'idempotency-key': line.idempotencyKey,
        ...bearer(tokenOf.get(line.customerId) ?? ''),
      });
      if (answer.status === 202 && answer.body.orderId) return { ...line, orderId: answer.body.orderId };
      // The first request may still be in progress, or refused for load: wait for it.
      await sleep(1000 * attempt);
    }
    throw new Error(`order with Idempotency-Key ${line.idempotencyKey} could not be recovered`);
  });
  return {
    ledger: [...placed, ...recovered],
    recovered: recovered.length,
  };
}
