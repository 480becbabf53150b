import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FunctionSpec, LambdaRuntime } from '../../local/lambda/runtime';

/**
 * How the local Lambda runtime shares the total sandbox cap between
 * functions: a function nobody calls gives up its last sandbox after a while.
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
  (runtime.sandboxes() as Record<string, { sandboxes: number; reclaimed: number }>)[id]!;

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
