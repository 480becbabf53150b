import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { withThisNode } from '../../local/this-node';

const ROOT = join(__dirname, '..', '..');

export interface LocalProcess {
  readonly child: ChildProcess;
  readonly apiUrl: string;
  readonly awsEndpoint: string;
  readonly startupMs: number;
  stop(): Promise<void>;
}

/**
 * Starts `local/main.ts` (what `npm start` runs) as a child process and
 * resolves once it prints where its API listens.
 */
export function startLocalProcess(args: readonly string[], timeoutMs = 240_000): Promise<LocalProcess> {
  const started = Date.now();
  const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'local', 'main.ts'), ...args], {
    cwd: ROOT,
    env: withThisNode(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the local cloud did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const api = /API listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      const aws = /AWS endpoint \(.*?\) (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!api || !aws) return;
      clearTimeout(timer);
      resolve({
        child,
        apiUrl: api[1]!,
        awsEndpoint: aws[1]!,
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
