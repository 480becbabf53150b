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
import {
  type Baseline,
  checkInvariants,
  type InvariantOptions,
  type InvariantReport,
  readBaseline,
} from './invariants';
import type { LedgerLine, ReservationLine } from './processor';
import type { Profile } from './profiles';
import { type ConsolePeriod, progressLine } from './progress';
import { recoverUnanswered, recoverUnansweredReservations } from './recovery';
import { type LevelResult, type MemorySample, machine, writeReport } from './report';
import { DEFAULT_SEED, readSeed, type Seed, seed, writeSeed } from './seed';
import { localMemory, localStats, mapPool, resetLocalStats, sleep, type Target } from './target';
import { tokensFor } from './tokens';

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
  /** Every reservation the run sent, with its answer (those not seen recovered by their Idempotency-Key). */
  readonly reservations: readonly ReservationLine[];
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

  const data = await seedOf(options, dir, log);
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
  const run: Run = { options, dir, log, data, tokens, tokenOf, adminToken, ledgerFile, reservationsFile };
  const runMix = mixRunner(run);
  await warmUp(run, runMix);
  const { levels, memory, failures, stoppedEarly } = await runLevels(run, runMix);
  const { invariants, orders, reservations, failures: unchecked } = await checkRun(run, baseline);
  failures.push(...unchecked);

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
  return {
    ok: failures.length === 0,
    dir,
    reportFile,
    failures,
    invariants,
    orders,
    reservations,
    seed: data,
    levels,
  };
}

/** What the phases of a run share, once it has seeded. */
interface Run {
  readonly options: RunOptions;
  readonly dir: string;
  readonly log: (line: string) => void;
  readonly data: Seed;
  readonly tokens: ReturnType<typeof tokensFor>;
  /** Each seeded customer's token. */
  readonly tokenOf: ReadonlyMap<string, string>;
  readonly adminToken: string;
  /** The orders the mix places, one JSON line each. */
  readonly ledgerFile: string;
  /** The reservations the mix makes, one JSON line each. */
  readonly reservationsFile: string;
}

/** The run's seed, read from its seed file or seeded now, and kept in `dir`. */
async function seedOf(options: RunOptions, dir: string, log: (line: string) => void): Promise<Seed> {
  const { profile, target } = options;
  let data: Seed;
  if (options.seedFile) {
    data = readSeed(options.seedFile);
    log(`seed: ${options.seedFile} (${data.customers.length} customers, ${data.products.length} products)`);
  } else {
    data = await seed(target, { ...DEFAULT_SEED, ...profile.seed });
    log(`seeded ${data.customers.length} customers and ${data.products.length} products`);
  }
  writeSeed(join(dir, 'seed.json'), data);
  return data;
}

type MixRunner = (name: string, rate: number, seconds: number) => ReturnType<typeof runArtillery>;

/**
 * Runs the mix at `rate` for `seconds` with Artillery; its orders go to the ledger. A run longer than
 * PROGRESS_AFTER_SECONDS (a soak) logs a line of progress for each 10 s period as it goes.
 */
function mixRunner(run: Run): MixRunner {
  const { options, dir, log, data, tokens, tokenOf, adminToken, ledgerFile, reservationsFile } = run;
  const { profile, target } = options;
  return (name, rate, seconds) => {
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
}

/** The warm-up of the profile, if it has one: its first level, not measured. */
async function warmUp({ options, log }: Run, runMix: MixRunner) {
  const { profile, target } = options;
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
}

/**
 * Runs each level of the profile in turn (the local cloud's counters reset
 * before it and read after it), up to one that fails to run or achieves
 * under half its rate.
 */
async function runLevels(run: Run, runMix: MixRunner) {
  const { options, log } = run;
  const { profile, target } = options;
  const memory: MemorySample[] = [];
  const levels: LevelResult[] = [];
  const failures: string[] = [];
  let stoppedEarly: string | undefined;
  for (const rate of profile.levels) {
    if (stoppedEarly) break;
    await resetLocalStats(target);
    const sampler = sampleMemory(run, memory);
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
    if (profile.failOnError) failures.push(...levelFailures(metrics, rate));
  }
  return { levels, memory, failures, stoppedEarly };
}

/**
 * Samples the local cloud's memory every `sampleEverySeconds` of the profile
 * into `memory`, from now; undefined where it has none or the target is not local.
 */
function sampleMemory({ options, log }: Run, memory: MemorySample[]) {
  const { profile, target } = options;
  const levelStart = Date.now();
  return profile.sampleEverySeconds && target.awsEndpoint
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
}

/** What fails a level of a profile that fails on any error: its errors, its dropped iterations. */
function levelFailures(metrics: ReturnType<typeof levelMetrics>, rate: number): string[] {
  const failures: string[] = [];
  if (metrics.errors.total > 0)
    failures.push(
      `${metrics.errors.total} errors at ${rate}/s: ${Object.entries(metrics.errors.byKind)
        .map(([k, n]) => `${k} × ${n}`)
        .join(', ')}`,
    );
  if (metrics.iterations.dropped > 0)
    failures.push(`${metrics.iterations.dropped} iterations dropped at ${rate}/s`);
  return failures;
}

/**
 * After the load: the invariants, checked on every order the run placed
 * (those whose answer it did not see recovered first), and what failed the
 * run there.
 */
async function checkRun(run: Run, baseline: Baseline) {
  const { options, log, data, tokenOf, ledgerFile, reservationsFile } = run;
  const { target } = options;
  const failures: string[] = [];
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
  let reservations: ReservationLine[] = [];
  try {
    const { ledger, recovered } = await recoverUnanswered(target, ledgerLines, tokenOf);
    orders = ledger;
    if (recovered > 0)
      log(`recovered ${recovered} orders placed without an answer seen, by their Idempotency-Key`);
    const sent = readFileSync(reservationsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ReservationLine);
    const resent = await recoverUnansweredReservations(target, sent, tokenOf);
    reservations = resent.reservations;
    if (resent.recovered > 0)
      log(`recovered ${resent.recovered} reservations sent without an answer seen, by their Idempotency-Key`);
    invariants = await checkInvariants(target, data, baseline, ledger, options.invariants, reservations);
  } catch (error) {
    // A target still working off the load's backlog may not answer: that fails the run, with its report.
    failures.push(`the invariants could not be checked: ${(error as Error).message}`);
    invariants = { ok: false, checks: [], orders: { placed: ledgerLines.length, outcomes: {} } };
  }
  for (const check of invariants.checks)
    if (check.violations.length)
      failures.push(`invariant broken (${check.violations.length}×): ${check.name}`);
  return { invariants, orders, reservations, failures };
}
