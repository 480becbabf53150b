/**
 * One level of a profile as an Artillery run: the script (written as JSON,
 * which Artillery reads as YAML), the run itself (Artillery's own CLI from
 * the `load/` package, output to its JSON report), and what the report makes
 * of that JSON.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { withThisNode } from '@commerce/local-cloud';
import { buildSync } from 'esbuild';
import type { ProcessorSettings } from './processor';
import { expectedStatuses, OPERATIONS, type Operation, type Profile } from './profiles';
import { type ConsolePeriod, consolePeriods } from './progress';
import { ARTILLERY, ensureLoadTools, LOAD_DIR } from './tools';

export { LOAD_DIR };

const ARRIVAL_TIMER = join(LOAD_DIR, 'arrival-timer.cjs');

/** Artillery's summary of a histogram (milliseconds for response times). */
export interface Summary {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
}

/** One period of Artillery's JSON report (the aggregate, or one of the intermediate 10 s periods). */
export interface ArtilleryPeriod {
  readonly counters: Record<string, number>;
  readonly summaries: Record<string, Summary>;
  readonly firstMetricAt: number;
  readonly lastMetricAt: number;
  readonly period: number | string;
}

export interface ArtilleryReport {
  readonly aggregate: ArtilleryPeriod;
  readonly intermediate: readonly ArtilleryPeriod[];
}

export function artilleryScript(profile: Profile, rate: number, target: string) {
  const { weights } = profile;
  return {
    config: {
      target,
      // A request unanswered after 10 s is an error (ETIMEDOUT), so a level always ends; an order sent
      // with `Prefer: wait=N` may take N s more by design.
      http: { timeout: 10 + (profile.waitSeconds ?? 0) },
      phases: [
        {
          name: `${rate}/s`,
          duration: profile.durationSeconds,
          arrivalRate: rate,
          // Bounds what is in flight if the target stalls; arrivals over it are dropped (vusers.skipped).
          maxVusers: Math.max(50, rate * (profile.sagaLimitSeconds + 5)),
        },
      ],
      // Bundled by runArtillery with the project's esbuild (Artillery would bundle a .ts itself, with
      // esbuild-wasm, several times slower to start, into load/dist).
      processor: './processor.js',
      plugins: { 'metrics-by-endpoint': { useOnlyRequestNames: true } },
    },
    scenarios: [
      {
        name: 'place_order',
        weight: weights.placeOrder,
        flow: [
          {
            post: {
              url: '/orders',
              name: 'place_order',
              beforeRequest: 'newOrder',
              afterResponse: 'orderPlaced',
            },
          },
          {
            // Artillery runs a loop's body at least once: for an order not followed, the pause is a
            // no-op and the GET is skipped by its ifTrue.
            loop: [
              { function: 'pauseBeforePoll' },
              {
                get: {
                  url: '/orders/{{ orderId }}',
                  name: 'get_order',
                  // The token of the customer who placed it (set by newOrder).
                  headers: { authorization: '{{ authorization }}' },
                  ifTrue: 'polling',
                  afterResponse: 'orderPolled',
                },
              },
            ],
            whileTrue: 'stillPolling',
          },
        ],
      },
      {
        name: 'reserve_stock',
        weight: weights.reserveStock,
        flow: [
          { function: 'pickProduct' },
          {
            post: {
              url: '/products/{{ productId }}/reservations',
              name: 'reserve_stock',
              beforeRequest: 'newReservation',
              // Its answer in the reservations' ledger (without it every reservation was unanswered there,
              // and the invariants could check `reserved` only within a range), and its status checked.
              afterResponse: 'reservationAnswered',
            },
          },
        ],
      },
      {
        name: 'create_customer',
        weight: weights.createCustomer,
        flow: [
          {
            post: {
              url: '/customers',
              name: 'create_customer',
              beforeRequest: 'newCustomer',
              afterResponse: 'expectStatus',
            },
          },
        ],
      },
    ],
  };
}

/**
 * Runs one level with Artillery and returns its JSON report. Artillery's console output goes to
 * `<name>.log`; the run is killed if it outlives its phase by more than a minute plus the saga limit.
 */
export async function runArtillery(options: {
  dir: string;
  name: string;
  script: ReturnType<typeof artilleryScript>;
  settings: ProcessorSettings;
  durationSeconds: number;
  sagaLimitSeconds: number;
  /** `Prefer: wait=N` on the orders: their requests may take N s longer. */
  waitSeconds?: number;
  /** Called with each 10 s period of Artillery's console report as it is printed (progress.ts). */
  onPeriod?: (period: ConsolePeriod) => void;
}): Promise<ArtilleryReport> {
  ensureLoadTools();
  const scriptFile = join(options.dir, `${options.name}.artillery.json`);
  const settingsFile = join(options.dir, `${options.name}.settings.json`);
  const output = join(options.dir, `${options.name}.json`);
  buildSync({
    entryPoints: [join(LOAD_DIR, 'processor.ts')],
    outfile: join(options.dir, 'processor.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    logLevel: 'warning',
  });
  writeFileSync(scriptFile, JSON.stringify(options.script, null, 2));
  writeFileSync(settingsFile, JSON.stringify(options.settings));
  const log = createWriteStream(join(options.dir, `${options.name}.log`));
  const child = spawn(ARTILLERY, ['run', '--output', output, scriptFile], {
    cwd: options.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: withThisNode({
      ...process.env,
      LOAD_SETTINGS: settingsFile,
      // Artillery sends telemetry (a fetch to PostHog) on every run unless this variable is set: a run calls only the target.
      ARTILLERY_DISABLE_TELEMETRY: 'true',
      // Arrivals timed without spinning a core (see arrival-timer.cjs); Node.js preloads it in Artillery's worker threads too.
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${JSON.stringify(ARRIVAL_TIMER)}`]
        .filter(Boolean)
        .join(' '),
    }),
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const periods = options.onPeriod ? consolePeriods(options.onPeriod) : undefined;
  if (periods) createInterface({ input: child.stdout }).on('line', periods.line).on('close', periods.end);
  // Past its phase a level only drains: each request ends within its 10 s timeout and a followed saga
  // within its limit (plus one poll's timeout). Artillery's own start is slow on a loaded machine.
  const requestTimeout = 10 + (options.waitSeconds ?? 0);
  const limitMs = (options.durationSeconds + options.sagaLimitSeconds + requestTimeout + 10 + 120) * 1000;
  const timer = setTimeout(() => child.kill('SIGTERM'), limitMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  await new Promise((resolve) => log.end(resolve));
  if (code !== 0 || !existsSync(output))
    throw new Error(
      `Artillery exited with ${code ?? `a signal (stopped at its limit of ${limitMs / 1000} s)`}; see ${options.name}.log in ${options.dir}`,
    );
  return JSON.parse(readFileSync(output, 'utf8')) as ArtilleryReport;
}

export interface OperationMetrics {
  readonly latency: Summary | undefined;
  readonly statuses: Record<string, number>;
  readonly unexpected: number;
  readonly networkErrors: number;
}

export interface LevelMetrics {
  readonly targetRate: number;
  readonly durationSeconds: number;
  /** From the first to the last metric of the level (the tail past the duration is the last answers). */
  readonly elapsedSeconds: number;
  readonly iterations: { created: number; completed: number; failed: number; dropped: number };
  readonly achievedRate: number;
  readonly httpRequests: number;
  readonly httpRate: number;
  readonly errors: { readonly total: number; readonly byKind: Record<string, number> };
  readonly operations: Record<Operation, OperationMetrics>;
  readonly saga: {
    readonly followed: number;
    readonly endToEnd: Summary | undefined;
    /** Followed orders answered `201` final by a waited `POST` (`--wait`), measured with no poll. */
    readonly answeredFinal: number;
    readonly missedLimit: number;
    readonly outcomes: Record<string, number>;
  };
}

const PLUGIN = 'plugins.metrics-by-endpoint';

/** What the report needs from one period of Artillery's JSON. */
export function levelMetrics(
  period: ArtilleryPeriod,
  targetRate: number,
  durationSeconds: number,
  waitSeconds?: number,
): LevelMetrics {
  const unexpectedStatus = (op: Operation, status: string) =>
    !expectedStatuses(op, waitSeconds).includes(Number(status));
  const c = (name: string) => period.counters[name] ?? 0;
  const withPrefix = (prefix: string) =>
    Object.fromEntries(
      Object.entries(period.counters)
        .filter(([name]) => name.startsWith(prefix))
        .map(([name, n]) => [name.slice(prefix.length), n]),
    );
  const operations = Object.fromEntries(
    (Object.keys(OPERATIONS) as Operation[]).map((op) => {
      const statuses = withPrefix(`${PLUGIN}.${op}.codes.`);
      const unexpected = Object.entries(statuses)
        .filter(([status]) => unexpectedStatus(op, status))
        .reduce((sum, [, n]) => sum + n, 0);
      const networkErrors = Object.values(withPrefix(`${PLUGIN}.${op}.errors.`)).reduce((a, b) => a + b, 0);
      return [
        op,
        { latency: period.summaries[`${PLUGIN}.response_time.${op}`], statuses, unexpected, networkErrors },
      ];
    }),
  ) as Record<Operation, OperationMetrics>;

  const byKind: Record<string, number> = {};
  for (const [kind, n] of Object.entries(withPrefix('errors.'))) byKind[kind] = n;
  for (const [op, m] of Object.entries(operations))
    for (const [status, n] of Object.entries(m.statuses))
      if (unexpectedStatus(op as Operation, status)) byKind[`${op} ${status}`] = n;
  const total = Object.values(byKind).reduce((a, b) => a + b, 0);

  const elapsedSeconds = Math.max(durationSeconds, (period.lastMetricAt - period.firstMetricAt) / 1000);
  const created = c('vusers.created');
  const completed = c('vusers.completed');
  const dropped =
    c('vusers.skipped') +
    Math.max(0, Math.round(targetRate * durationSeconds) - created - c('vusers.skipped'));
  const httpRequests = c('http.requests');
  return {
    targetRate,
    durationSeconds,
    elapsedSeconds,
    iterations: { created, completed, failed: c('vusers.failed'), dropped },
    // Per second of the level, like the target: an iteration answered after the level ended still counts
    // (its latency shows it), one that failed (an error, or no answer within the 10 s timeout) does not.
    achievedRate: completed / durationSeconds,
    httpRequests,
    httpRate: httpRequests / durationSeconds,
    errors: { total, byKind },
    operations,
    saga: {
      followed: c('saga.followed'),
      endToEnd: period.summaries['saga.end_to_end'],
      answeredFinal: c('saga.answered_final'),
      missedLimit: c('saga.missed_limit'),
      outcomes: withPrefix('saga.outcome.'),
    },
  };
}

/** Achieved at least 95% of the target, with no error and nothing dropped. */
export const sustained = (m: LevelMetrics) =>
  m.errors.total === 0 && m.iterations.dropped === 0 && m.achievedRate >= 0.95 * m.targetRate;
