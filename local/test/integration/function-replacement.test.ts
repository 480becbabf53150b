import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FunctionSpec, LambdaRuntime } from '../../lambda/runtime';

/**
 * What `npm start -- --watch` relies on: a function pointed at a new bundle
 * (LambdaRuntime.replaceFunction) runs the new code from the next invocation
 * on, whatever state its sandboxes were in (idle, busy, still starting).
 */
let work: string;
let runtime: LambdaRuntime;

/** A bundle that answers with its version, after `delayMs`. */
function bundle(version: string): string {
  const dir = join(work, version);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'index.js'),
    `exports.handler = async (event) => {
  await new Promise((resolve) => setTimeout(resolve, event.delayMs ?? 0));
  return { version: ${JSON.stringify(version)} };
};
`,
  );
  return dir;
}

const spec = (codeDir: string): FunctionSpec => ({
  logicalId: 'Fn',
  codeDir,
  handler: 'index.handler',
  timeoutMs: 10_000,
  memoryMb: 128,
  environment: { LAMBDA_TASK_ROOT: codeDir },
});
const pool = () => (runtime.sandboxes() as Record<string, { sandboxes: number; busy: number }>).Fn!;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'function-replacement-'));
});
afterEach(async () => {
  await runtime.stop();
  rmSync(work, { recursive: true, force: true });
});

test('after replaceFunction, an idle sandbox is stopped and the next invocation runs the new bundle', async () => {
  runtime = new LambdaRuntime([spec(bundle('v1'))], join(work, 'logs'));
  await expect(runtime.invoke('Fn', {})).resolves.toEqual({ version: 'v1' });
  expect(pool().sandboxes).toBe(1);

  runtime.replaceFunction(spec(bundle('v2')));
  expect(pool().sandboxes).toBe(0);
  expect(runtime.specs.get('Fn')!.codeDir).toBe(join(work, 'v2'));
  for (let i = 0; i < 3; i++) await expect(runtime.invoke('Fn', {})).resolves.toEqual({ version: 'v2' });
});

test('a busy sandbox finishes its invocation on the old bundle, then stops; none after the swap runs it', async () => {
  runtime = new LambdaRuntime([spec(bundle('v1'))], join(work, 'logs'));
  await runtime.warmAll();
  const running = runtime.invoke('Fn', { delayMs: 400 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(pool().busy).toBe(1);

  runtime.replaceFunction(spec(bundle('v2')));
  // Invocations made meanwhile and after the old one ends all get the new code, never the old sandbox.
  const during = Array.from({ length: 3 }, () => runtime.invoke('Fn', { delayMs: 100 }));
  await expect(running).resolves.toEqual({ version: 'v1' });
  const after = Array.from({ length: 3 }, () => runtime.invoke('Fn', {}));
  for (const answer of await Promise.all([...during, ...after])) expect(answer).toEqual({ version: 'v2' });
});

test('a sandbox still starting on the old bundle when it is replaced never takes an invocation', async () => {
  runtime = new LambdaRuntime([spec(bundle('v1'))], join(work, 'logs'), { maxSandboxesPerFunction: 1 });
  const warming = runtime.warmAll();
  runtime.replaceFunction(spec(bundle('v2')));
  await expect(runtime.invoke('Fn', {})).resolves.toEqual({ version: 'v2' });
  await warming;
  await expect(runtime.invoke('Fn', {})).resolves.toEqual({ version: 'v2' });
  expect(pool().sandboxes).toBe(1);
});
