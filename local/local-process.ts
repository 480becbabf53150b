import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { join } from 'node:path';
import { withThisNode } from './this-node';

/** The project's root: `npm start` runs here, and the local cloud synthesizes the app found here. */
const ROOT = join(__dirname, '..');

/**
 * The command `npm start` runs (`node --import tsx local/main.ts`) with these
 * options: the project's own tsx, loaded into the Node running this process.
 * One process, not tsx's launcher, which would run the cloud in a child of
 * its own and stay resident beside it (about 50 MB) only to pass signals on.
 */
export function localCloudCommand(args: readonly string[], spawnOptions: SpawnOptions = {}) {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', join(__dirname, 'main.ts'), ...args],
    options: { cwd: ROOT, env: withThisNode(), ...spawnOptions },
  };
}

/** The API's URL and the AWS endpoint's, once the cloud's output says where they listen. */
export function readyUrls(
  output: string,
): { readonly apiUrl: string; readonly awsEndpoint: string } | undefined {
  const api = /API listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
  const aws = /AWS endpoint \(.*?\) (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
  return api && aws ? { apiUrl: api[1]!, awsEndpoint: aws[1]! } : undefined;
}

export interface LocalProcess {
  readonly child: ChildProcess;
  readonly apiUrl: string;
  readonly awsEndpoint: string;
  readonly startupMs: number;
  stop(): Promise<void>;
}

/**
 * Starts the local cloud as `npm start` does (`local/main.ts`, with its
 * command-line options) as a child process and resolves once it prints where
 * its API listens. For a cloud that must be crashed and restarted on its
 * data, see CloudProcess.
 */
export function startLocalProcess(args: readonly string[], timeoutMs = 240_000): Promise<LocalProcess> {
  const started = Date.now();
  const { command, args: argv, options } = localCloudCommand(args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = spawn(command, argv, options);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the local cloud did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const urls = readyUrls(output);
      if (!urls) return;
      clearTimeout(timer);
      resolve({
        child,
        ...urls,
        startupMs: Date.now() - started,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the local cloud exited with ${code} before it was ready:\n${output}`));
    });
  });
}
