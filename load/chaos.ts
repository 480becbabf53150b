/**
 * `npm run chaos -- [--rate R] [--seconds S] [--cells a,b] [--port P] [--out DIR]`: the mix at a
 * moderate rate under each fault of the matrix in turn (chaos-matrix.ts), on a local cloud this
 * command starts (and, for the crash cell, kills and starts again on its data), then the load
 * report's invariants plus the matrix's own checks per cell: no order charged twice, every
 * dead-letter message explained by the cell's fault, every cancellation's reason explained.
 * Writes `chaos.md` (the matrix as a table) and `chaos.json`; exits non-zero if a cell fails.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudProcess, type CommandSpec, parseCommandLine } from '@commerce/local-cloud';
import { LOAD_DIR } from './artillery';
import { type Audit, auditEffects } from './audit';
import { type Cell, type CellFaults, chaosMatrix, EDGES, selectCells } from './chaos-matrix';
import {
  answersTheFaultChanged,
  type CellObservation,
  type CellResult,
  type DeadLetter,
  type ExplainedDeadLetter,
  explainDeadLetter,
  judgeCell,
  matrixTable,
} from './chaos-verdicts';
import { DEFAULT_INVARIANT_OPTIONS } from './invariants';
import { PROFILES, type Profile } from './profiles';
import { type QuiescenceStats, waitForQuiescence } from './quiescence';
import { redrive } from './redrive';
import { machine } from './report';
import { runProfile } from './run';
import { sleep, type Target } from './target';

export const CHAOS_COMMAND = {
  usage: 'npm run chaos -- [options]',
  description:
    'The mix at a moderate rate under each fault of the matrix in turn (load/chaos-matrix.ts), on a local\n' +
    "cloud it starts itself; then the invariants and each cell's own checks. Writes chaos.md and\n" +
    'chaos.json; exits 1 if a cell fails. See docs/load-testing.md, "Chaos".',
  options: {
    rate: { type: 'string', value: 'R', default: '10', description: 'iterations/s of the mix in each cell' },
    seconds: { type: 'string', value: 'S', default: '30', description: 'seconds of load in each cell' },
    cells: {
      type: 'string',
      value: 'LIST',
      defaultText: 'every cell',
      description: 'cells by name or prefix, comma-separated (CapturePayment: its five cells)',
    },
    port: {
      type: 'string',
      value: 'N',
      defaultText: 'a free one',
      description: "the local cloud's API port",
    },
    out: {
      type: 'string',
      value: 'DIR',
      defaultText: 'load/out/chaos-<time>',
      description: 'where the report goes',
    },
  },
  examples: [
    'npm run chaos',
    'npm run chaos -- --rate 5 --seconds 15 --cells baseline,duplicates,CapturePayment',
  ],
} as const satisfies CommandSpec;

// Parsed when run (imported, e.g. by the help's test, it has its defaults and runs nothing).
const { values } = parseCommandLine(CHAOS_COMMAND, require.main === module ? process.argv.slice(2) : []);

const positive = (name: string, value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${value}`);
  return n;
};

async function admin<T>(target: Target, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${target.awsEndpoint}/_local/${path}`, {
    method,
    signal: AbortSignal.timeout(15_000),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} /_local/${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Puts the cell's faults in force (and lifts any other), or lifts them all. */
export async function applyFaults(target: Target, faults: CellFaults | undefined) {
  await admin(target, 'POST', 'faults', faults?.steps ?? []);
  await admin(target, 'POST', 'faults/dynamodb', faults?.dynamodb ?? []);
  await admin(target, 'POST', 'faults/duplicates', faults?.duplicates ?? {});
  await admin(target, 'POST', 'faults/eventbridge', faults?.eventbridge ?? {});
  await admin(target, 'POST', 'faults/deliveries', faults?.deliveries ?? {});
  await admin(target, 'POST', 'faults/functions', faults?.functions ?? []);
}

interface Stats extends QuiescenceStats {
  stepFunctions: QuiescenceStats['stepFunctions'] & { taskRetries?: number; taskFailures?: number };
  streams: Record<string, { pending: boolean; records: number; batches: number; duplicatedBatches?: number }>;
  eventBridge: QuiescenceStats['eventBridge'] & { duplicatedDeliveries?: number };
}

/**
 * Waits until the cloud is quiet (load/quiescence.ts: nothing on its way,
 * and no item written for 3 s), at most `limitMs`, and reads its stats.
 */
async function quiescence(target: Target, limitMs: number): Promise<Stats> {
  const read = () => admin<Stats>(target, 'GET', 'stats');
  return (await waitForQuiescence(read, { stillMs: 3_000, everyMs: 500, timeoutMs: limitMs })).stats;
}

interface Injected {
  dynamodb: { refused: number; lostAnswers: number };
  eventbridge: { refusedEntries: number; refusedCalls: number };
  deliveries: { poisonRecords: number; failedTargetAttempts: number };
  functions: { afterWork: number; midway: number };
}

/** What the local cloud's DynamoDB and EventBridge faults have done since it started (`GET /_local/faults`). */
async function injected(target: Target): Promise<Injected> {
  return (await admin<{ injected: Injected }>(target, 'GET', 'faults')).injected;
}

async function deadLetters(target: Target): Promise<DeadLetter[]> {
  const queues = await admin<Record<string, { messageId: string; body: string }[]>>(
    target,
    'GET',
    'dead-letters',
  );
  return Object.entries(queues).flatMap(([queue, messages]) =>
    messages.map((m) => ({ queue, messageId: m.messageId, body: m.body })),
  );
}

async function runCell(
  cell: Cell,
  cloud: CloudProcess,
  options: { rate: number; seconds: number; dir: string },
): Promise<CellResult> {
  const target: Target = { api: cloud.apiUrl, awsEndpoint: cloud.awsEndpoint };
  const log = (line: string) => console.log(`[${cell.name}] ${line}`);
  const before = new Set((await deadLetters(target)).map((d) => d.messageId));
  const injectedBefore = await injected(target);
  const profile: Profile = {
    ...PROFILES.mix,
    levels: [options.rate],
    durationSeconds: options.seconds,
    // A cell judges outcomes, not latency: nothing to warm up for, and its one cloud is warm after the first.
    warmUpSeconds: 0,
    // The edges in every cell: 4 products of 3 units each, contended by many orders (OUT_OF_STOCK), and
    // 4 customers with $30 of credit, reached after an order or two (PAYMENT_DECLINED): compensation runs.
    seed: { ...EDGES, customers: 20, products: 20 },
  };
  let crash: Promise<void> | undefined;
  const problems: string[] = [];
  const newDeadLetters = async () =>
    (await deadLetters(target))
      .filter((d) => !before.has(d.messageId))
      .map((d) => explainDeadLetter(d, cell.faults));
  let letters: ExplainedDeadLetter[] | undefined;
  let redriven: CellObservation['redrive'];
  const invariants = DEFAULT_INVARIANT_OPTIONS;
  const outcome = await runProfile({
    profile,
    target,
    outDir: join(options.dir, cell.name),
    invariants,
    log,
    // The fault is put in force once the cell's data is seeded: the mix runs under it, the setup does not.
    onLevelStart: async () => {
      await applyFaults(target, cell.faults);
      if (!cell.faults.crash) return;
      crash = sleep((options.seconds * 1000) / 2).then(async () => {
        log('SIGKILL to the local cloud’s process group');
        await cloud.crash();
        const t0 = Date.now();
        await cloud.restart();
        log(`started again on its data in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      });
      // Reported after the load, where the run waits for it.
      crash.catch(() => undefined);
    },
    // A restart that outlasts the level (one that must synthesize the app again takes ~10 s) ends before the
    // level's counters are read from the cloud; how it went is reported below.
    onLevelEnd: () => crash?.catch(() => undefined),
    beforeInvariants: async () => {
      if (crash) await crash;
      // The fault stays in force until the sagas it slowed have finished, then is lifted for the checks.
      const limit = (invariants.sagaDeadlineSeconds + invariants.finalGraceSeconds) * 1000;
      await quiescence(target, limit);
      await applyFaults(target, undefined);
      // The dead letters the fault made, explained before the redrive delivers (and deletes) them.
      letters = await newDeadLetters();
      if (letters.length === 0 && cell.deadLetters !== 'expected') return;
      const result = await redrive(target.awsEndpoint!);
      redriven = {
        redriven: result.redriven.length,
        left: result.left.map((l) => `${l.queue} ${l.messageId}: ${l.reason}`),
      };
      log(`redrive: ${result.redriven.length} delivered again, ${result.left.length} left`);
      // What the redrive delivered has reached the views before the invariants are read.
      await quiescence(target, 60_000);
    },
  });
  const stats = await quiescence(target, 60_000);
  // A crash restarts the counters with the cloud: what the cell injected is then what came after.
  const injectedAfter = await injected(target);
  letters ??= await newDeadLetters();
  let audit: Audit = { chargedTwice: [], withoutCause: [] };
  try {
    audit = await auditEffects(target, {
      customerIds: new Set(outcome.seed.customers.map((c) => c.customerId)),
      productIds: new Set(outcome.seed.products.map((p) => p.productId)),
      orders: outcome.orders,
      reservationIds: new Set(
        outcome.reservations.flatMap((r) => (r.reservationId ? [r.reservationId] : [])),
      ),
    });
  } catch (error) {
    problems.push(`the event tables could not be audited: ${(error as Error).message}`);
  }
  const answers = cell.answersUnchanged
    ? answersTheFaultChanged(outcome.levels.map((l) => l.metrics.errors.byKind))
    : [];
  return judgeCell(cell, {
    orders: outcome.invariants.orders.placed,
    outcomes: outcome.invariants.orders.outcomes,
    failures: [...outcome.failures, ...problems, ...answers],
    chargedTwice: audit.chargedTwice,
    withoutCause: audit.withoutCause,
    deadLetters: letters,
    retries: stats.stepFunctions?.taskRetries ?? 0,
    taskFailures: stats.stepFunctions?.taskFailures ?? 0,
    ...(redriven ? { redrive: redriven } : {}),
    injected: injectedDuring(cell, injectedBefore, injectedAfter, stats),
  });
}

/**
 * What the cell's faults did: the local cloud's counters after the cell less
 * those before it, or those after alone where a crash restarted them.
 */
function injectedDuring(
  cell: Cell,
  before: Injected,
  after: Injected,
  stats: Stats,
): NonNullable<CellObservation['injected']> {
  const since = (a: number, b: number) => (a >= b ? a - b : a);
  return {
    dynamodbRefused: since(after.dynamodb.refused, before.dynamodb.refused),
    lostAnswers: since(after.dynamodb.lostAnswers, before.dynamodb.lostAnswers),
    busEntriesRefused: since(after.eventbridge.refusedEntries, before.eventbridge.refusedEntries),
    busCallsRefused: since(after.eventbridge.refusedCalls, before.eventbridge.refusedCalls),
    // A Task's failure is the load's own too (a product sold out): the fault's only where the cell has one.
    stepFailures: cell.faults.steps.length > 0 ? (stats.stepFunctions?.taskFailures ?? 0) : 0,
    poisonRecords: since(after.deliveries.poisonRecords, before.deliveries.poisonRecords),
    failedTargetAttempts: since(
      after.deliveries.failedTargetAttempts,
      before.deliveries.failedTargetAttempts,
    ),
    functionDeaths: since(
      after.functions.afterWork + after.functions.midway,
      before.functions.afterWork + before.functions.midway,
    ),
    duplicated:
      Object.values(stats.streams ?? {}).reduce((n, s) => n + (s.duplicatedBatches ?? 0), 0) +
      (stats.eventBridge?.duplicatedDeliveries ?? 0),
  };
}

async function main() {
  const rate = positive('rate', values.rate);
  const seconds = positive('seconds', values.seconds);
  const matrix = chaosMatrix();
  const cells = selectCells(matrix, values.cells);
  const startedAt = new Date();
  const dir = values.out ?? join(LOAD_DIR, 'out', `chaos-${startedAt.toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'local-cloud.log');
  console.log(`chaos: ${cells.length} cells at ${rate}/s for ${seconds} s each`);
  const results: CellResult[] = [];
  // One local cloud for every cell, on a data directory, so that the crash can restart it on its data.
  const cloud = await CloudProcess.start({
    dataDir: join(dir, 'data'),
    ...(values.port ? { port: positive('port', values.port) } : {}),
    // The sweeper every 15 s rather than every minute: sagas the crash cut off end sooner.
    args: ['--schedule-interval-ms', '15000'],
    onOutput: (line) => appendFileSync(logFile, `${line}\n`),
  });
  try {
    console.log(`local cloud on ${cloud.apiUrl} (log: ${logFile})`);
    for (const cell of cells) {
      console.log(`\n== ${cell.name}: ${cell.description}`);
      let result: CellResult;
      try {
        result = await runCell(cell, cloud, { rate, seconds, dir });
      } catch (error) {
        result = judgeCell(cell, {
          orders: 0,
          outcomes: {},
          failures: [`the cell did not run: ${(error as Error).message}`],
          chargedTwice: [],
          withoutCause: [],
          deadLetters: [],
          retries: 0,
          taskFailures: 0,
        });
        // Whatever it left in force must not leak into the next cell.
        await applyFaults({ api: cloud.apiUrl, awsEndpoint: cloud.awsEndpoint }, undefined).catch(
          () => undefined,
        );
      }
      results.push(result);
      // A crash whose restart failed leaves no cloud for the next cell: start it again on its data.
      if (!cloud.running) await cloud.restart();
      console.log(`[${cell.name}] ${result.ok ? 'pass' : `FAIL\n  - ${result.problems.join('\n  - ')}`}`);
    }
  } finally {
    await cloud.stop();
  }
  const report = [
    `# npm run chaos: ${startedAt.toISOString()}`,
    '',
    `${machine()}. The mix at ${rate} iterations/s for ${seconds} s per cell, on one local cloud (faults lifted between cells; each cell seeds its own customers and products).`,
    '',
    matrixTable(matrix, results),
    '',
    ...results
      .filter((r) => !r.ok)
      .flatMap((r) => [`## ${r.cell}: failed`, '', ...r.problems.map((p) => `- ${p}`), '']),
  ].join('\n');
  writeFileSync(join(dir, 'chaos.md'), `${report}\n`);
  writeFileSync(join(dir, 'chaos.json'), `${JSON.stringify({ rate, seconds, results }, null, 2)}\n`);
  console.log(`\n${matrixTable(matrix, results)}\n\nreport: ${join(dir, 'chaos.md')}`);
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

if (require.main === module)
  main().catch((error: Error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
