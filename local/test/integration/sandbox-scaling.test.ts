import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FunctionSpec, LambdaRuntime } from '../../lambda/runtime';

/**
 * How the local Lambda runtime sizes its pools: a function starts another
 * sandbox only when an invocation has waited long, and at the total cap a
 * function nobody calls gives up its last sandbox after a while, and a
 * function left with none takes the next sandbox that frees.
 */
const SLOW = join(__dirname, '..', 'fixtures', 'stepfunctions', 'functions', 'slow');
const spec = (logicalId: string): FunctionSpec => ({
  logicalId,
  codeDir: SLOW,
  handler: 'index.handler',
  timeoutMs: 10_000,
  memoryMb: 128,
  environment: {},
});

let work: string;
let runtime: LambdaRuntime;
const sandboxes = (id: string) =>
  (
    runtime.sandboxes() as Record<
      string,
      { sandboxes: number; started: number; reclaimed: number; queued: number }
    >
  )[id]!;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'sandbox-eviction-'));
});
afterEach(async () => {
  await runtime.stop();
  rmSync(work, { recursive: true, force: true });
});

test('at the total cap, a waiting function takes the last sandbox of one idle long enough, not before', async () => {
  runtime = new LambdaRuntime([spec('Scheduled'), spec('Api'), spec('Saga')], join(work, 'logs'), {
    maxSandboxes: 3,
    lastSandboxIdleMs: 600,
    // What this test holds is the idle time of a function's last sandbox, not its age.
    evictableAfterMs: 0,
  });
  await runtime.warmAll();
  // The cap is taken by one sandbox each; the saga gets busy: its second concurrent invocation must wait
  // until another function's last sandbox has been idle 600 ms.
  const started = performance.now();
  const [first, second] = await Promise.all([
    runtime.invoke('Saga', { delayMs: 100 }).then(() => performance.now() - started),
    runtime.invoke('Saga', { delayMs: 100 }).then(() => performance.now() - started),
  ]);
  // One ran at once; the other waited for the first to finish (its own sandbox, ~100 ms) rather than 600 ms.
  expect(Math.min(first, second)).toBeLessThan(400);
  expect(Math.max(first, second)).toBeLessThan(450);
  expect(sandboxes('Saga').sandboxes).toBe(1);

  // Now a burst of the saga long enough to outlast the others' idle time takes their room.
  await Promise.all(Array.from({ length: 12 }, () => runtime.invoke('Saga', { delayMs: 150 })));
  expect(sandboxes('Saga').sandboxes).toBeGreaterThan(1);
  expect(sandboxes('Scheduled').reclaimed + sandboxes('Api').reclaimed).toBeGreaterThan(0);
  // The function that went cold still runs (a cold start).
  await expect(runtime.invoke('Scheduled', { delayMs: 0 })).resolves.toMatchObject({ captured: true });
});

test('an invocation that would wait briefly for a busy sandbox waits for it; a long queue starts more', async () => {
  // A threshold far above the invocations' few milliseconds, so that a slow machine cannot blur the two cases.
  runtime = new LambdaRuntime([spec('Api')], join(work, 'logs'), { startAfterWaitMs: 1_000 });
  await runtime.warmAll();
  // Three warm invocations (after the first, which is left out) give the pool its recent duration (about 10 ms).
  for (let i = 0; i < 4; i++) await runtime.invoke('Api', { delayMs: 10 });
  // Pairs that overlap: the second would wait about 10 ms for the first, so no sandbox starts for it.
  for (let i = 0; i < 5; i++) {
    await Promise.all([runtime.invoke('Api', { delayMs: 10 }), runtime.invoke('Api', { delayMs: 10 })]);
  }
  expect(sandboxes('Api')).toMatchObject({ sandboxes: 1, started: 1 });

  // A queue that would take seconds to drain through one sandbox grows the pool.
  await Promise.all(Array.from({ length: 12 }, () => runtime.invoke('Api', { delayMs: 400 })));
  expect(sandboxes('Api').started).toBeGreaterThan(1);
});

test('the wait expected for a queue counts the sandboxes the pool has, not those it may grow to', async () => {
  // A threshold far above the queue's drain, so that the pool keeps its one sandbox throughout.
  runtime = new LambdaRuntime([spec('Api')], join(work, 'logs'), { startAfterWaitMs: 5_000 });
  await runtime.warmAll();
  for (let i = 0; i < 4; i++) await runtime.invoke('Api', { delayMs: 50 });
  const burst = Array.from({ length: 10 }, () => runtime.invoke('Api', { delayMs: 50 }));
  await new Promise((resolve) => setTimeout(resolve, 10));
  // Nine queued behind one busy sandbox at about 50 ms each: some 450 ms, not that over the cap of 8.
  expect(sandboxes('Api')).toMatchObject({ sandboxes: 1 });
  expect(runtime.expectedWaitMs('Api')).toBeGreaterThan(300);
  await Promise.all(burst);
  expect(runtime.expectedWaitMs('Api')).toBe(0);
});

test('a pool with no warm duration yet starts another sandbox only for an invocation that has waited', async () => {
  runtime = new LambdaRuntime([spec('Api')], join(work, 'logs'), { startAfterWaitMs: 1_000 });
  await runtime.warmAll();
  // A burst on a sandbox that has never run an invocation: six of 10 ms drain in well under a second, so
  // none waits the threshold, and no sandbox starts (counting each queued one as an endless wait started five).
  await Promise.all(Array.from({ length: 6 }, () => runtime.invoke('Api', { delayMs: 10 })));
  expect(sandboxes('Api')).toMatchObject({ sandboxes: 1, started: 1 });

  // A queue that does wait still grows the pool.
  await Promise.all(Array.from({ length: 6 }, () => runtime.invoke('Api', { delayMs: 600 })));
  expect(sandboxes('Api').started).toBeGreaterThan(1);
});

test('a pool grows for a queue that has waited, not for one its recent duration says would', async () => {
  runtime = new LambdaRuntime([spec('Api')], join(work, 'logs'), { startAfterWaitMs: 1_000 });
  await runtime.warmAll();
  // Slow invocations (as a cold sandbox's are) leave a recent duration of about 400 ms.
  for (let i = 0; i < 3; i++) await runtime.invoke('Api', { delayMs: 400 });
  // Then a burst of quick ones: by that duration the five queued would take 2 s to drain (a start at
  // once, by the rule that counted it), but they drain in about 50 ms, so none waits the threshold.
  await Promise.all(Array.from({ length: 6 }, () => runtime.invoke('Api', { delayMs: 10 })));
  expect(sandboxes('Api')).toMatchObject({ sandboxes: 1, started: 1 });
});

test('a function that has a sandbox serving starts one more at a time, not one per waiting invocation', async () => {
  runtime = new LambdaRuntime([spec('Api')], join(work, 'logs'), { startAfterWaitMs: 200 });
  await runtime.warmAll();
  await runtime.invoke('Api', { delayMs: 10 });
  // Eight long invocations at once: past the threshold every queued one has waited it; the rule that
  // started a sandbox for each had eight at 350 ms. One at a time, a second start waits for the first.
  const burst = Promise.all(Array.from({ length: 8 }, () => runtime.invoke('Api', { delayMs: 1_000 })));
  await new Promise((resolve) => setTimeout(resolve, 350));
  expect(sandboxes('Api').sandboxes).toBeLessThanOrEqual(3);
  await burst;
  // The queue that lasted still grew the pool.
  expect(sandboxes('Api').started).toBeGreaterThan(2);
});

test('a function with no sandbox starts one for a burst, not one per invocation', async () => {
  runtime = new LambdaRuntime([spec('Api')], join(work, 'logs'), { startAfterWaitMs: 1_000 });
  // Eight quick invocations on a pool with no sandbox at all (as after its last was given up for another
  // function's room): one start serves them all within the threshold.
  await Promise.all(Array.from({ length: 8 }, () => runtime.invoke('Api', { delayMs: 10 })));
  expect(sandboxes('Api')).toMatchObject({ sandboxes: 1, started: 1 });
});

test('at the total cap, a function with no sandbox takes the next one freed, not the end of another queue', async () => {
  runtime = new LambdaRuntime([spec('Sweeper'), spec('Api')], join(work, 'logs'), {
    maxSandboxes: 2,
    lastSandboxIdleMs: 100,
    evictableAfterMs: 0,
    startAfterWaitMs: 50,
  });
  await runtime.warmAll();
  // Slow scheduled runs queue up and take the API's last sandbox once it has been idle 100 ms.
  const sweeps = Promise.all(Array.from({ length: 30 }, () => runtime.invoke('Sweeper', { delayMs: 200 })));
  const deadline = Date.now() + 5_000;
  while (sandboxes('Sweeper').sandboxes < 2 || sandboxes('Api').sandboxes > 0) {
    if (Date.now() > deadline)
      throw new Error(`the sweeper never took the API's room: ${JSON.stringify(runtime.sandboxes())}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // The API's request runs once one of the sweeper's two sandboxes frees, while the sweeper's queue still waits.
  await runtime.invoke('Api', { delayMs: 0 });
  expect(sandboxes('Sweeper').queued).toBeGreaterThan(0);
  await sweeps;
  expect(sandboxes('Sweeper').reclaimed).toBeGreaterThan(0);
});
