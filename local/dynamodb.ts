import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR, fetchMavenDependencies } from './maven';

/** A running DynamoDB Local, listening on 127.0.0.1 only. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`, for SDK clients' `endpoint`. */
  endpoint: string;
  port: number;
  /** The JVM's process id. */
  pid: number;
  /** Ends the JVM; resolves once it has exited. */
  stop(): Promise<void>;
}

export interface StartDynamoDbLocalOptions {
  /** TCP port on 127.0.0.1; 0 or undefined picks a free one. */
  port?: number;
  /** JVM heap ceiling (-Xmx) in MiB; default 256. */
  heapMb?: number;
}

const HOST = '127.0.0.1';
const POM_DIR = join(__dirname, 'dynamodb');
const LAUNCHER = join(POM_DIR, 'Launcher.java');
// DynamoDB Local is up in a few seconds on a quiet machine; the launcher is compiled from source at
// each start, which on a 2-core machine busy with a synth can take far longer.
const START_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 5_000;
const STDERR_TAIL_CHARS = 4_000;

/** Fetches DynamoDB Local's jars and native library once; returns their directory. */
export function installDynamoDbLocal(): string {
  return fetchMavenDependencies(POM_DIR, join(CACHE_DIR, 'dynamodb'));
}

function javaBinary(): string {
  const home = process.env.JAVA_HOME;
  if (home) {
    const candidate = join(home, 'bin', 'java');
    if (existsSync(candidate)) return candidate;
  }
  return 'java';
}

/**
 * JVM flags for a small, quick-starting server on a 2-core machine: a capped
 * heap, the serial collector (no GC threads to compete with the tests), a
 * small thread stack, and IPv4 sockets so the listener is a plain
 * 127.0.0.1 socket. The JIT is left at full tiering: C1-only starts no faster
 * here and loses steady throughput.
 */
function jvmArgs(libDir: string, heapMb: number): string[] {
  return [
    `-Xmx${heapMb}m`,
    '-Xms32m',
    '-Xss512k',
    '-XX:+UseSerialGC',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.net.preferIPv4Stack=true',
    `-Djava.library.path=${libDir}`,
    '-cp',
    join(libDir, '*'),
  ];
}

/**
 * Starts DynamoDB Local in memory (`-inMemory -sharedDb`, telemetry off) on
 * 127.0.0.1. The JVM exits when its stdin closes, so it does not outlive this
 * process even if this one is killed; it is also killed on this process's
 * `exit`. Rejects if it is not listening within 120 s.
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const requestedPort = options.port ?? 0;
  const heapMb = options.heapMb ?? 256;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
    throw new Error(`startDynamoDbLocal: invalid port ${requestedPort}`);
  }
  if (!Number.isInteger(heapMb) || heapMb < 32)
    throw new Error(`startDynamoDbLocal: invalid heapMb ${heapMb}`);

  const libDir = installDynamoDbLocal();
  const child: ChildProcessWithoutNullStreams = spawn(
    javaBinary(),
    [...jvmArgs(libDir, heapMb), LAUNCHER, String(requestedPort), HOST],
    {
      env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );

  let stderrTail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  // A closed pipe on our side must not crash this process.
  child.stdin.on('error', () => undefined);

  let exited = child.exitCode !== null || child.signalCode !== null;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      process.removeListener('exit', killOnExit);
      resolve();
    });
  });
  const killOnExit = (): void => {
    if (!exited) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);

  const describe = (what: string): Error =>
    new Error(`DynamoDB Local ${what}.\n--- JVM stderr (tail) ---\n${stderrTail.trim() || '(empty)'}`);

  const port = await new Promise<number>((resolve, reject) => {
    let stdoutBuffer = '';
    const timer = setTimeout(() => {
      finish();
      child.kill('SIGKILL');
      reject(describe(`did not come up within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: string): void => {
      stdoutBuffer += chunk;
      const match = /^READY (\d+)$/m.exec(stdoutBuffer);
      if (match?.[1]) {
        finish();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      finish();
      reject(describe(`exited before it was ready (${signal ?? `code ${code}`})`));
    };
    const onError = (error: Error): void => {
      finish();
      reject(new Error(`Could not start Java for DynamoDB Local (is Java 17+ installed?): ${error.message}`));
    };
    function finish(): void {
      clearTimeout(timer);
      child.stdout.removeListener('data', onData);
      child.removeListener('exit', onExit);
      child.removeListener('error', onError);
    }
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });

  // Keep draining stdout; let this process exit without an explicit stop()
  // (the `exit` hook and the closed stdin then end the JVM).
  child.stdout.resume();
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void }).unref?.();
  }

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    if (!stopping) {
      stopping = (async () => {
        if (exited) return;
        child.ref();
        child.stdin.end();
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exitPromise;
        clearTimeout(timer);
      })();
    }
    return stopping;
  };

  const pid = child.pid;
  if (pid === undefined) throw describe('has no process id');
  return { endpoint: `http://${HOST}:${port}`, port, pid, stop };
}
