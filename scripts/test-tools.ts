/**
 * Installs the tools the tests run: the Python ones (cfn-lint, Checkov,
 * Schemathesis), each pinned in its own venv under `local/.cache/` (see
 * `python-tool.ts`), and actionlint, built from its Go module into
 * `local/.cache/` (see `actionlint.ts`), all at once. The tests install whichever is missing themselves, one
 * at a time, the first time they need it (a few minutes on a fresh clone);
 * CI runs this first, as setup, so that `npm test` spends its time testing.
 *
 *   npm run test-tools
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureActionlint } from './actionlint';
import { ensureCfnLint } from './cfn-lint';
import { ensureCheckov } from './checkov';
import { ensureSchemathesis } from './fuzz';

const TOOLS: Record<string, (log: (message: string) => void) => string> = {
  actionlint: ensureActionlint,
  'cfn-lint': ensureCfnLint,
  checkov: ensureCheckov,
  schemathesis: ensureSchemathesis,
};

async function main() {
  const [tool] = process.argv.slice(2);
  if (tool) {
    TOOLS[tool]!((message) => console.log(`[${tool}] ${message}`));
    return;
  }
  // Each install blocks its process (pip runs synchronously), so each gets a process of its own.
  const started = performance.now();
  await Promise.all(
    Object.keys(TOOLS).map(async (name) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [...process.execArgv, __filename, name],
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      process.stdout.write(stdout);
    }),
  );
  console.log(`test tools ready in local/.cache (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
