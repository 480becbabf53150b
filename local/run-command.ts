import { type SpawnOptions, spawn } from 'node:child_process';

/** Runs a command to its end and resolves with its exit status and its output (stdout and stderr together). */
export function runCommand(
  command: string,
  args: readonly string[],
  options: Pick<SpawnOptions, 'cwd' | 'env'> = {},
): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', (error) => resolve({ status: null, output: error.message }));
    child.once('close', (status) => resolve({ status, output }));
  });
}
