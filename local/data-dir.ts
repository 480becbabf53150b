import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What the local cloud keeps in `--data-dir DIR` so that a start on the same
 * DIR resumes where the last one stopped, however it stopped (Ctrl-C or
 * SIGKILL): the DynamoDB engine's journal, each stream mapping's position, the
 * dead-letter queues, when each scheduled rule last fired, and the local
 * issuer's signing key. The layout:
 *
 * ```text
 * DIR/dynamodb/journal.jsonl        every DynamoDB write, one per line (tables, items, stream records)
 * DIR/streams/<mapping>.json        the last sequence number handled per shard
 * DIR/dead-letters/<queue>.jsonl    every message sent to a queue, one per line
 * DIR/schedules.json                each scheduled rule's last scheduled time
 * DIR/issuer/signing-key.pem        the local issuer's RSA key (tokens outlive a restart)
 * DIR/lock                          the process id of the cloud running on it
 * ```
 */
export function dataDirLayout(dataDir: string) {
  return {
    root: dataDir,
    dynamodb: join(dataDir, 'dynamodb'),
    streams: join(dataDir, 'streams'),
    deadLetters: join(dataDir, 'dead-letters'),
    schedules: join(dataDir, 'schedules.json'),
    issuerKey: join(dataDir, 'issuer', 'signing-key.pem'),
  };
}

/** A document kept across starts: what a part of the cloud reads at start and writes as it goes. */
export interface KeptDocument<T> {
  /** The document, or undefined if none was written yet. */
  read(): T | undefined;
  write(value: T): void;
}

/**
 * One JSON document in a file, replaced whole at each write (written beside
 * it, then renamed over it: rename is atomic, so a crash at any moment
 * leaves the previous document or the new one, never a torn one). Not
 * fsynced: it survives the process's crash, not the machine's, as the
 * DynamoDB engine's journal does (see local/dynamodb/journal.ts).
 */
export class JsonFile<T> implements KeptDocument<T> {
  constructor(readonly path: string) {}

  /** The document, or undefined if none was written yet. */
  read(): T | undefined {
    if (!existsSync(this.path)) return undefined;
    return JSON.parse(readFileSync(this.path, 'utf8')) as T;
  }

  write(value: T): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const next = `${this.path}.next`;
    writeFileSync(next, JSON.stringify(value));
    renameSync(next, this.path);
  }
}

/**
 * Claims the data directory for this process (`DIR/lock`, holding its
 * process id): two local clouds appending to one journal would corrupt it. A lock left by a process that no longer runs (killed) is taken over.
 * Returns the release.
 */
export function lockDataDir(layout: ReturnType<typeof dataDirLayout>): () => void {
  const lock = join(layout.root, 'lock');
  mkdirSync(layout.root, { recursive: true });
  if (existsSync(lock)) {
    const holder = Number(readFileSync(lock, 'utf8'));
    if (Number.isInteger(holder) && holder !== process.pid && isRunning(holder)) {
      throw new Error(`the data directory ${layout.root} is in use by process ${holder}`);
    }
  }
  writeFileSync(lock, String(process.pid));
  return () => {
    if (existsSync(lock) && Number(readFileSync(lock, 'utf8')) === process.pid) rmSync(lock);
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * A process killed but not yet reaped by its parent (a zombie) still answers
 * `kill(pid, 0)`: just after a SIGKILL of the cloud's process group its lock
 * names one, and a restart must take the lock over, not wait for the reaping.
 * Linux says so in /proc/<pid>/stat (state `Z`); elsewhere it counts as running.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
