import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LambdaRuntime, type LambdaRuntimeOptions } from '../../lambda/runtime';

/**
 * An invocation that waits for a busy sandbox is handed over to it: the
 * sandbox starts it as soon as the one it runs has answered, as Lambda's
 * runtime asks for the next event right after posting a response. Still one
 * invocation at a time per sandbox, in the order they came; given back to run
 * elsewhere when another sandbox frees first, when the one it waits behind
 * times out, or when that one pauses.
 */

// Each sandbox names itself; an invocation sleeps `ms` (a plain timer: work, to the runtime), may then pause
// `pauseMs` (awaiting node:timers/promises, which the sandbox sees as a pause, as in functions/shared/poll.ts),
// appends its tag to `log`, and answers with its sandbox's name.
const HANDLER = `
const sandbox = Math.random().toString(36).slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let running = 0;
exports.handler = async (e) => {
  if (++running > 1) throw new Error('two invocations at once');
  await sleep(e.ms ?? 10);
  if (e.pauseMs) await require('node:timers/promises').setTimeout(e.pauseMs);
  if (e.log) require('node:fs').appendFileSync(e.log, e.tag + '\\n');
  running--;
  return { sandbox, tag: e.tag };
};
`;

interface Answer {
  sandbox: string;
  tag: string;
}

let dir: string;
let runtime: LambdaRuntime;
let log: string;

function runtimeWith(options: LambdaRuntimeOptions, timeoutMs = 5_000) {
  runtime = new LambdaRuntime(
    [{ logicalId: 'Fn', codeDir: dir, handler: 'index.handler', timeoutMs, memoryMb: 128, environment: {} }],
    join(dir, 'logs'),
    options,
  );
  return runtime;
}

const invoke = (event: Record<string, unknown>, options: { maxQueueWaitMs?: number } = {}) =>
  runtime.invoke('Fn', { log, ...event }, options) as Promise<Answer>;
const stats = () => runtime.sandboxes().Fn!;
const logged = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hand-over-'));
  writeFileSync(join(dir, 'index.js'), HANDLER);
  log = join(dir, 'ran.log');
  writeFileSync(log, '');
});
afterEach(async () => {
  await runtime.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('invocations waiting for a busy sandbox are handed over one by one, and run in the order they came', async () => {
  runtimeWith({ maxSandboxesPerFunction: 1 });
  const tags = Array.from({ length: 20 }, (_, i) => `i${i}`);
  const answers = await Promise.all(tags.map((tag) => invoke({ tag })));
  expect(new Set(answers.map((a) => a.sandbox)).size).toBe(1);
  expect(logged()).toEqual(tags);
  // The first takes the sandbox as it becomes ready; each of the others was handed over to it.
  expect(stats()).toMatchObject({ invocations: 20, handedOver: 19, givenBack: 0, overlaps: 0, sandboxes: 1 });
});

test('an HTTP request, bounded in its wait, keeps its place in the queue and is never handed over', async () => {
  runtimeWith({ maxSandboxesPerFunction: 1 });
  const tags = Array.from({ length: 10 }, (_, i) => `r${i}`);
  await Promise.all(tags.map((tag) => invoke({ tag }, { maxQueueWaitMs: 5_000 })));
  expect(logged()).toEqual(tags);
  expect(stats()).toMatchObject({ invocations: 10, handedOver: 0, overlaps: 0 });
});

test('what was handed over to a sandbox still busy is taken back by a sandbox that frees first', async () => {
  runtimeWith({ maxSandboxesPerFunction: 2, startAfterWaitMs: 0 });
  // Two sandboxes, both warm.
  await Promise.all([invoke({ ms: 300 }), invoke({ ms: 300 })]);
  expect(stats().sandboxes).toBe(2);
  writeFileSync(log, '');
  const givenBackBefore = stats().givenBack;
  const slow = invoke({ ms: 1_500, tag: 'slow' });
  const quick = invoke({ ms: 50, tag: 'quick' });
  await sleep(10);
  // Both are busy: this one is handed over to the sandbox busy the longest, the slow one's ...
  const next = invoke({ ms: 10, tag: 'next' });
  // ... and runs in the quick one's as soon as that one is free, not after the slow one.
  const [slowAnswer, quickAnswer, nextAnswer] = await Promise.all([slow, quick, next]);
  expect(logged()).toEqual(['quick', 'next', 'slow']);
  expect(nextAnswer.sandbox).toBe(quickAnswer.sandbox);
  expect(nextAnswer.sandbox).not.toBe(slowAnswer.sandbox);
  expect(stats()).toMatchObject({ givenBack: givenBackBefore + 1, overlaps: 0 });
});

test('what was handed over to a sandbox whose invocation times out runs once, in another sandbox', async () => {
  runtimeWith({ maxSandboxesPerFunction: 1 }, 300);
  const overdue = invoke({ ms: 2_000, tag: 'overdue' });
  await sleep(20);
  const next = invoke({ ms: 10, tag: 'next' });
  await expect(overdue).rejects.toMatchObject({ errorType: 'Sandbox.Timedout' });
  const answer = await next;
  expect(answer.tag).toBe('next');
  await sleep(100);
  expect(logged()).toEqual(['next']);
  expect(stats()).toMatchObject({ started: 2, replacedAfterTimeout: 1, givenBack: 1, overlaps: 0 });
});

test('what was handed over to a sandbox whose invocation pauses is given back, and runs in another', async () => {
  runtimeWith({ maxSandboxesPerFunction: 1 });
  const paused = invoke({ ms: 100, pauseMs: 1_500, tag: 'paused' });
  await sleep(20);
  // Handed over while the first works; given back when it pauses, it runs in the room the pause lends.
  const next = invoke({ ms: 10, tag: 'next' });
  const [pausedAnswer, nextAnswer] = await Promise.all([paused, next]);
  expect(logged()).toEqual(['next', 'paused']);
  expect(nextAnswer.sandbox).not.toBe(pausedAnswer.sandbox);
  expect(stats()).toMatchObject({ handedOver: 0, overlaps: 0 });
  expect(stats().givenBack).toBeGreaterThanOrEqual(1);
});
