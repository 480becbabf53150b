/**
 * cfn-lint, installed by the project itself: a Python virtual environment
 * under `local/.cache/` (git-ignored, where the project keeps the tools it
 * fetches; it outlives `npm ci`) with a pinned cfn-lint
 * from PyPI. Only `python3` with `venv` and pip is needed; a cfn-lint
 * installed elsewhere on the machine is never used. The first install
 * downloads about 40 MB (cfn-lint and its dependencies) and can take minutes.
 *
 *   npx tsx scripts/cfn-lint.ts <template.json>...   # installs if needed, lints, exits 1 on an error
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CFN_LINT_VERSION = '1.58.0';

const PROJECT_ROOT = join(__dirname, '..');
const VENV_DIR = join(PROJECT_ROOT, 'local', '.cache', `cfn-lint-${CFN_LINT_VERSION}`);
/** Written last: a venv without it is a broken install (interrupted), made again from scratch. */
const MARKER = join(VENV_DIR, 'installed-version');
const venvBin = (name: string) =>
  process.platform === 'win32' ? join(VENV_DIR, 'Scripts', `${name}.exe`) : join(VENV_DIR, 'bin', name);

function run(command: string, args: string[]) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  });
  if (result.error) throw new Error(`${command} could not be run: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (exit ${result.status}):\n${result.stderr || result.stdout}`,
    );
  }
  return result.stdout;
}

/** Installs the pinned cfn-lint once (idempotent, cached); returns the path of its executable. */
export function ensureCfnLint(log: (message: string) => void = () => {}): string {
  const cfnLintBin = venvBin('cfn-lint');
  if (existsSync(MARKER) && readFileSync(MARKER, 'utf8') === CFN_LINT_VERSION && existsSync(cfnLintBin)) {
    return cfnLintBin;
  }
  log(`installing cfn-lint ${CFN_LINT_VERSION} into ${VENV_DIR}`);
  rmSync(VENV_DIR, { recursive: true, force: true });
  const python = process.platform === 'win32' ? 'python' : 'python3';
  const install = ['install', '--quiet', '--no-input', `cfn-lint==${CFN_LINT_VERSION}`];
  try {
    run(python, ['-m', 'venv', VENV_DIR]);
    run(venvBin('python'), ['-m', 'pip', ...install]);
  } catch (error) {
    // Debian's python3 without python3-venv has no ensurepip: make the venv bare and install into it
    // with the system's pip (22.3 or later knows --python).
    log(`python3 -m venv failed (${(error as Error).message.split('\n')[0]}); using the system pip`);
    rmSync(VENV_DIR, { recursive: true, force: true });
    run(python, ['-m', 'venv', '--without-pip', VENV_DIR]);
    run(python, ['-m', 'pip', '--python', venvBin('python'), ...install]);
  }
  const installed = run(cfnLintBin, ['--version']).trim();
  if (!installed.includes(CFN_LINT_VERSION))
    throw new Error(`expected cfn-lint ${CFN_LINT_VERSION}, got "${installed}"`);
  writeFileSync(MARKER, CFN_LINT_VERSION);
  return cfnLintBin;
}

/** One finding of cfn-lint's JSON output. */
export interface CfnLintMatch {
  readonly Level: 'Error' | 'Warning' | 'Informational';
  readonly Message: string;
  readonly Filename: string;
  readonly Rule: { readonly Id: string };
  readonly Location: { readonly Path?: readonly (string | number)[] };
}

/** Lints the templates with the project's cfn-lint and returns every finding, errors and warnings alike. */
export function cfnLint(templates: readonly string[], log?: (message: string) => void): CfnLintMatch[] {
  const cfnLintBin = ensureCfnLint(log);
  // `none`: the exit code would only say what the findings say; they are all returned and judged by the caller.
  const result = spawnSync(
    cfnLintBin,
    ['--format', 'json', '--non-zero-exit-code', 'none', '--', ...templates],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`cfn-lint failed (exit ${result.status}):\n${result.stderr}`);
  return JSON.parse(result.stdout || '[]') as CfnLintMatch[];
}

export const formatMatch = (m: CfnLintMatch) =>
  `${m.Level} ${m.Rule.Id} ${m.Filename} ${(m.Location.Path ?? []).join('/')}: ${m.Message}`;

if (require.main === module) {
  const templates = process.argv.slice(2);
  if (templates.length === 0) {
    console.error('usage: tsx scripts/cfn-lint.ts <template.json>...');
    process.exit(2);
  }
  const matches = cfnLint(templates, (m) => console.error(m));
  for (const m of matches) console.log(formatMatch(m));
  process.exit(matches.some((m) => m.Level === 'Error') ? 1 : 0);
}
