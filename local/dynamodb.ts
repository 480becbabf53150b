import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { CACHE_DIR, fetchedMarker, fetchMavenDependencies, fetchMavenDependenciesAsync } from './maven';
import { runCommand } from './run-command';

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
  /** JVM tuning flags in place of `defaultJvmFlags(heapMb)` (local/bench/dynamodb-local.ts compares them). */
  jvmFlags?: readonly string[];
  /**
   * Keep the database on disk in this directory (`-dbPath`; created if
   * missing) instead of in memory: a later start on the same directory finds
   * every table, item and stream record. Undefined: in memory.
   */
  dbDir?: string;
}

const HOST = '127.0.0.1';
const POM_DIR = join(__dirname, 'dynamodb');
const LAUNCHER = join(POM_DIR, 'Launcher.java');
const LIB_DIR = join(CACHE_DIR, 'dynamodb');
const CLASS_DIR = join(CACHE_DIR, 'dynamodb-launcher');
// DynamoDB Local is up in about 1.5 s on a quiet machine; on a 2-core machine busy with a synth it
// can take far longer.
const START_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 5_000;
const STDERR_TAIL_CHARS = 4_000;

/** Fetches DynamoDB Local's jars and native library once; returns their directory. */
export function installDynamoDbLocal(): string {
  return fetchMavenDependencies(POM_DIR, LIB_DIR);
}

/**
 * Fetches DynamoDB Local's jars (once) and compiles the launcher (once per
 * version of Launcher.java and of the jars) into local/.cache, without
 * blocking this process. `npm ci` runs it (local/prepare.ts); a start finds
 * both ready. Running Launcher.java as a source program instead compiles it
 * in the JVM at every start: about 1.8 s of CPU more per start here (4.0 s
 * against 2.2 s to READY).
 */
export async function prepareDynamoDbLocal(): Promise<{ libDir: string; classDir: string }> {
  const libDir = await fetchMavenDependenciesAsync(POM_DIR, LIB_DIR);
  const hash = createHash('sha256')
    .update(readFileSync(LAUNCHER))
    .update(readFileSync(fetchedMarker(libDir), 'utf8').split('\n')[1] ?? '')
    .digest('hex');
  const marker = join(CLASS_DIR, '.complete');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === hash) return { libDir, classDir: CLASS_DIR };
  // javac through the java launcher (the jdk.compiler module is in the JRE images that run the
  // source launcher, e.g. Debian's openjdk-17-jre-headless, which has no javac binary).
  const building = `${CLASS_DIR}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const jars = readdirSync(libDir)
    .filter((f) => f.endsWith('.jar'))
    .map((f) => join(libDir, f));
  const { status, output } = await runCommand(javaBinary(), [
    '-m',
    'jdk.compiler/com.sun.tools.javac.Main',
    '--release',
    '17',
    '-cp',
    jars.join(':'),
    '-d',
    building,
    LAUNCHER,
  ]);
  if (status !== 0) throw new Error(`compiling ${LAUNCHER} failed (exit ${status}):\n${output}`);
  writeFileSync(join(building, '.complete'), hash);
  rmSync(CLASS_DIR, { recursive: true, force: true });
  renameSync(building, CLASS_DIR);
  return { libDir, classDir: CLASS_DIR };
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
 * JVM tuning flags for a small server on a 2-core machine, with a heap ceiling
 * of `heapMb`: a capped heap, the serial collector (no GC threads to compete
 * with the tests), a small thread stack, and the C1 compiler only
 * (`-XX:TieredStopAtLevel=1`). (jvmArgs adds IPv4 sockets, so the listener is
 * a plain 127.0.0.1 socket.)
 *
 * Measured with local/bench/dynamodb-local.ts (3,000 calls of warm-up, then
 * the JVM's CPU time over the calls; min / median / max of 2–3 runs on this
 * shared 2-core machine; the other variants were no better):
 *
 * | workload                                   | full tiering (C2)           | C1 only                     |
 * | ------------------------------------------ | --------------------------- | --------------------------- |
 * | 5,000 Put/GetItem, one at a time           | 0.74/0.79/0.82 ms, 133–167 MB | 0.36/0.57/0.64 ms, 110 MB |
 * | 30,000 Put/GetItem, 4 at a time            | 0.42/0.44/0.44 ms, 161–165 MB | 0.41/0.43/0.43 ms, 113 MB |
 * | 10,000 TransactWriteItems(2)/Query, 4 at a time | 1.38/1.42/1.42 ms, 186–195 MB | 1.08/1.10/1.10 ms, 129 MB |
 *
 * C1 only costs as much CPU per call as C2 or less (C2's own compilations
 * are what a local cloud's short life mostly pays for), the same calls a
 * second within the noise, and 50–65 MB less memory. No better: the parallel
 * collector (0.83/0.95/1.15 ms, 205 MB), a 128 MB heap and 256 KB stacks
 * (0.82/0.96/0.98 ms, 142–171 MB), a Jetty pool of at most 16 threads with no
 * reserved threads (`-Dlauncher.maxThreads=16 -Dlauncher.reservedThreads=0`:
 * 0.73/0.78/1.00 ms, 137–144 MB), all against full tiering's 0.74/0.79/0.82 ms.
 *
 * Memory under the platform's load is another matter than under a benchmark
 * of one client: seeding 64-shard products and a 50/s mix took the JVM to
 * 351–367 MiB resident, its heap's committed size never given back. A heap
 * that shrinks after a full collection (`-XX:MaxHeapFreeRatio=30`,
 * `MinHeapFreeRatio=10`) and glibc's allocator kept to two arenas
 * (`MALLOC_ARENA_MAX=2`, set by startDynamoDbLocal) instead of one per
 * thread that allocates: 317–326 MiB in the same runs, 320–340 MiB through
 * 200/s bursts against 377; CPU per call unchanged. Jetty's pool held to 32
 * of its 200 threads saved some 30 MiB more, but one burst in five with it
 * ended orders `TIMEOUT` (none of five without), so it is not set until
 * more runs tell (docs/benchmarks.md, session 25).
 */
export function defaultJvmFlags(heapMb: number): string[] {
  return [
    `-Xmx${heapMb}m`,
    '-Xms32m',
    '-XX:MinHeapFreeRatio=10',
    '-XX:MaxHeapFreeRatio=30',
    '-Xss512k',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
  ];
}

function jvmArgs(libDir: string, classDir: string, flags: readonly string[]): string[] {
  return [
    ...flags,
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.net.preferIPv4Stack=true',
    `-Djava.library.path=${libDir}`,
    '-cp',
    `${join(libDir, '*')}:${classDir}`,
  ];
}

/**
 * Starts DynamoDB Local in memory (`-inMemory -sharedDb`, telemetry off), or
 * on disk in `dbDir` (`-dbPath`), on 127.0.0.1. The JVM exits when its stdin closes, so it does not outlive this
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

  const { libDir, classDir } = await prepareDynamoDbLocal();
  if (options.dbDir !== undefined) mkdirSync(options.dbDir, { recursive: true });
  const child: ChildProcessWithoutNullStreams = spawn(
    javaBinary(),
    [
      ...jvmArgs(libDir, classDir, options.jvmFlags ?? defaultJvmFlags(heapMb)),
      'Launcher',
      String(requestedPort),
      HOST,
      ...(options.dbDir === undefined ? [] : [resolvePath(options.dbDir)]),
    ],
    {
      // Two malloc arenas instead of glibc's one per thread that allocates (see defaultJvmFlags).
      env: { ...process.env, DDB_LOCAL_TELEMETRY: '0', MALLOC_ARENA_MAX: '2' },
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
