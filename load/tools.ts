/**
 * Artillery (load/package.json), installed into load/node_modules the first
 * time something needs it: `npm run load`, `npm run chaos`, the licence check
 * and the tests that run it. Not by `npm ci`: its tree (470 packages: the AWS
 * SDK, Azure, Playwright, …) took 38 of `npm ci`'s seconds, and running the
 * platform (`npm start`) needs none of it. `npm ci` in load/, from its lock
 * file, with no install script (so Playwright downloads no browser); again
 * whenever that lock file changes.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOAD_DIR = __dirname;
/** Artillery's own CLI. */
export const ARTILLERY = join(LOAD_DIR, 'node_modules', '.bin', 'artillery');
/** Written after an install: the hash of the lock file it installed. */
const MARKER = join(LOAD_DIR, 'node_modules', '.installed-from');
/** Held by the one process installing (Jest's workers may ask at once). */
const LOCK = join(LOAD_DIR, '.installing');
const WAIT_MS = 10 * 60 * 1000;

const lockFileHash = () =>
  createHash('sha256')
    .update(readFileSync(join(LOAD_DIR, 'package-lock.json')))
    .digest('hex');
const installed = (hash: string) => existsSync(MARKER) && readFileSync(MARKER, 'utf8') === hash;
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Installs the load tools unless they are installed from today's lock file; throws when npm fails. */
export function ensureLoadTools(log: (message: string) => void = (m) => console.error(m)): void {
  const hash = lockFileHash();
  if (installed(hash)) return;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Left by an install that was killed: older than any install takes.
      if (Date.now() - statSync(LOCK).mtimeMs > WAIT_MS) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${LOCK} is held: another install of the load tools hangs`);
      sleep(500);
      if (installed(hash)) return;
    }
  }
  try {
    if (installed(hash)) return;
    log('[load] installing the load tools (Artillery) into load/node_modules, once: about half a minute');
    const npm = spawnSync(
      'npm',
      ['--prefix', LOAD_DIR, 'ci', '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
        // npm is npm.cmd on Windows, which only a shell runs.
        shell: process.platform === 'win32',
      },
    );
    if (npm.status !== 0)
      throw new Error(
        `installing the load tools failed (npm ci in load/): ${npm.stderr || npm.error?.message}`,
      );
    writeFileSync(MARKER, hash);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

// `npm run load-tools`: install them now (a pipeline's step before it runs Artillery itself).
if (require.main === module) ensureLoadTools();
