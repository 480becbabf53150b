import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { localCloudCommand, readyUrls } from './local-process';

const START_TIMEOUT_MS = 240_000;
const EXIT_TIMEOUT_MS = 15_000;

export interface CloudProcessOptions {
  /** Where the cloud keeps its data (`--data-dir`): a restart resumes from it. */
  readonly dataDir: string;
  /** The API's port; 0 or undefined: a free one, chosen once and kept across restarts. */
  readonly port?: number;
  /** Further `npm start` options, e.g. `['--assembly-dir', dir, '--schedule-interval-ms', '500']`. */
  readonly args?: readonly string[];
  /** Each line the cloud prints (its output is otherwise kept only for a failed start's error). */
  readonly onOutput?: (line: string) => void;
  readonly startTimeoutMs?: number;
}

/**
 * The local cloud (`npm start`, that is `node --import tsx local/main.ts`) run as a
 * process group of its own, on a data directory, that can be crashed and
 * started again on the same data: for the crash test and the load runs'
 * chaos. Its API and AWS endpoint keep their ports across restarts, so a
 * client keeps its URLs (requests sent while it is down fail to connect).
 *
 * ```ts
 * const cloud = await CloudProcess.start({ dataDir, args: ['--schedule-interval-ms', '500'] });
 * // ... load against cloud.apiUrl ...
 * await cloud.crash();     // SIGKILL to the whole group: the cloud and any child it runs
 * await cloud.restart();   // the same command on the same data and ports; resolves once it serves
 * await cloud.stop();      // SIGTERM, as Ctrl-C: a clean stop
 * ```
 */
export class CloudProcess {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private output = '';
  /** Starts so far, the first included. */
  starts = 0;
  apiUrl = '';
  awsEndpoint = '';

  private constructor(
    private readonly options: CloudProcessOptions,
    /** The API's port; the AWS endpoint listens on the next. */
    readonly port: number,
  ) {}

  /** Starts the cloud and resolves once its API listens. */
  static async start(options: CloudProcessOptions): Promise<CloudProcess> {
    const cloud = new CloudProcess(options, options.port || (await freePortPair()));
    await cloud.launch();
    return cloud;
  }

  /** The process group's id (the group leader's pid), while it runs. */
  get pgid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get running(): boolean {
    return this.pgid !== undefined;
  }

  /**
   * Kills the whole group at once with SIGKILL — no handler runs, nothing is
   * flushed or stopped cleanly — and resolves once no process of it is left.
   */
  async crash(): Promise<void> {
    await this.signalGroup('SIGKILL');
  }

  /** Starts the cloud again with the same command, data directory and ports. */
  async restart(): Promise<void> {
    if (this.running) throw new Error('the local cloud is running: crash() or stop() it first');
    await this.launch();
  }

  /**
   * Stops the cloud cleanly: SIGTERM to the leader (the cloud, which stops
   * its parts in order, the DynamoDB journal and the data directory's lock last), then waits
   * for the whole group; SIGKILL to the group if it has not gone in 15 s.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    await this.signalGroup('SIGTERM', { leaderOnly: true });
  }

  private async launch(): Promise<void> {
    this.output = '';
    // detached: the child leads a new process group (setsid), which a signal to -pgid reaches whole.
    const { command, args, options } = localCloudCommand(
      [
        '--port',
        String(this.port),
        '--aws-port',
        String(this.port + 1),
        '--data-dir',
        this.options.dataDir,
        ...(this.options.args ?? []),
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const child = spawn(command, args, options);
    this.child = child;
    this.starts++;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const killOnExit = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    // This process going away must not leave the group running.
    process.once('exit', killOnExit);
    void this.exited.then(() => process.removeListener('exit', killOnExit));

    let pending = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      this.output += text;
      if (this.options.onOutput) {
        pending += text;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) this.options.onOutput(line);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);

    const timeoutMs = this.options.startTimeoutMs ?? START_TIMEOUT_MS;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish();
        void this.signalGroup('SIGKILL');
        reject(new Error(`the local cloud did not start within ${timeoutMs} ms:\n${this.output}`));
      }, timeoutMs);
      const onReady = () => {
        const urls = readyUrls(this.output);
        if (!urls) return;
        finish();
        this.apiUrl = urls.apiUrl;
        this.awsEndpoint = urls.awsEndpoint;
        resolve();
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        finish();
        reject(
          new Error(
            `the local cloud exited (${signal ?? `code ${code}`}) before it was ready:\n${this.output}`,
          ),
        );
      };
      function finish() {
        clearTimeout(timer);
        child.stdout!.removeListener('data', onReady);
        child.stderr!.removeListener('data', onReady);
        child.removeListener('exit', onExit);
      }
      child.stdout!.on('data', onReady);
      child.stderr!.on('data', onReady);
      child.once('exit', onExit);
    });
  }

  /**
   * Signals every process of the group (or its leader only) and waits until
   * none of the group is left (SIGKILL to the group after 15 s).
   */
  private async signalGroup(signal: NodeJS.Signals, { leaderOnly = false } = {}): Promise<void> {
    const pgid = this.child?.pid;
    if (pgid === undefined) return;
    const send = (s: NodeJS.Signals, target = -pgid) => {
      try {
        process.kill(target, s);
      } catch {
        // gone
      }
    };
    send(signal, leaderOnly ? pgid : -pgid);
    const deadline = Date.now() + EXIT_TIMEOUT_MS;
    // The leader's exit is not enough: a child it started (a synth under way) must be gone too, so
    // that the next start finds nothing of this one still running.
    while (groupAlive(pgid)) {
      if (Date.now() > deadline) send('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await this.exited;
  }
}

/**
 * Whether a process of the group is still alive. On Linux from /proc, not
 * counting zombies (killed, not yet reaped by whoever adopted them: they
 * hold nothing); elsewhere, whether the group can be signalled.
 */
function groupAlive(pgid: number): boolean {
  if (existsSync('/proc/self/stat')) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ')'.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the ports are chosen: below the ranges systems give outgoing connections (Linux 32768–60999,
 * macOS and Windows 49152–65535). A port of those ranges, free when chosen, can be taken by any
 * client's connection (or a server on port 0) before the cloud, still synthesizing, listens on it:
 * seen as EADDRINUSE on 127.0.0.1:40382 in a CI run of the crash test.
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_000;

/** A port p with p and p + 1 both free on 127.0.0.1 (the API and the AWS endpoint). */
async function freePortPair(): Promise<number> {
  const free = (port: number) =>
    listenOnce(port).then(
      (bound) => bound === port,
      () => false,
    );
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    if ((await free(port)) && (await free(port + 1))) return port;
  }
  throw new Error(`no two free ports in a row on 127.0.0.1 between ${PORTS_FROM} and ${PORTS_TO}`);
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
