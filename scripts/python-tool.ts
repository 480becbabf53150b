/**
 * A Python tool installed by the project itself (cfn-lint, Checkov): a virtual
 * environment under `local/.cache/` (git-ignored, where the project keeps the
 * tools it fetches; it outlives `npm ci`) with the pinned package from PyPI.
 * Only `python3` with `venv` and pip is needed; a copy installed elsewhere on
 * the machine is never used.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PROJECT_ROOT = join(__dirname, '..');

export interface PythonTool {
  /** The PyPI package, pinned to `version`. */
  readonly name: string;
  readonly version: string;
  /** The executable the package installs in the venv's bin. */
  readonly executable: string;
}

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

/** Installs the pinned tool once (idempotent, cached); returns the path of its executable. */
export function ensurePythonTool(tool: PythonTool, log: (message: string) => void = () => {}): string {
  const venvDir = join(PROJECT_ROOT, 'local', '.cache', `${tool.name}-${tool.version}`);
  const venvBin = (name: string) =>
    process.platform === 'win32' ? join(venvDir, 'Scripts', `${name}.exe`) : join(venvDir, 'bin', name);
  // Written last: a venv without it is a broken install (interrupted), made again from scratch.
  const marker = join(venvDir, 'installed-version');
  const bin = venvBin(tool.executable);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === tool.version && existsSync(bin)) return bin;
  log(`installing ${tool.name} ${tool.version} into ${venvDir}`);
  rmSync(venvDir, { recursive: true, force: true });
  const python = process.platform === 'win32' ? 'python' : 'python3';
  const install = ['install', '--quiet', '--no-input', `${tool.name}==${tool.version}`];
  try {
    run(python, ['-m', 'venv', venvDir]);
    run(venvBin('python'), ['-m', 'pip', ...install]);
  } catch (error) {
    // Debian's python3 without python3-venv has no ensurepip: make the venv bare and install into it
    // with the system's pip (22.3 or later knows --python).
    log(`python3 -m venv failed (${(error as Error).message.split('\n')[0]}); using the system pip`);
    rmSync(venvDir, { recursive: true, force: true });
    run(python, ['-m', 'venv', '--without-pip', venvDir]);
    run(python, ['-m', 'pip', '--python', venvBin('python'), ...install]);
  }
  const installed = run(bin, ['--version']).trim();
  if (!installed.includes(tool.version))
    throw new Error(`expected ${tool.name} ${tool.version}, got "${installed}"`);
  writeFileSync(marker, tool.version);
  return bin;
}
