import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type CommandSpec, helpText, LOGS_COMMAND, START_COMMAND } from '@commerce/local-cloud';
import { CHAOS_COMMAND } from '../../load/chaos';
import { LOAD_COMMAND, LOAD_COMMANDS, SEED_COMMAND } from '../../load/cli';
import { COLD_START_COMMAND } from '../../load/cold-start';
import { FLASH_SALE_COMMAND } from '../../load/flash-sale';
import { REDRIVE_COMMAND } from '../../load/redrive';
import { FUZZ_COMMAND } from '../../scripts/fuzz';

const ROOT = join(__dirname, '..', '..');

/** Every command a user runs, as they run it (npm's script and its arguments), and its option table. */
const COMMANDS: [string, string[], CommandSpec][] = [
  ['npm start', ['start'], START_COMMAND],
  ['npm run load', ['run', 'load'], LOAD_COMMAND],
  ...Object.entries(LOAD_COMMANDS)
    .filter(([name]) => name !== 'seed')
    .map(([name, spec]): [string, string[], CommandSpec] => [
      `npm run load -- ${name}`,
      ['run', 'load', '--', name],
      spec,
    ]),
  ['npm run seed', ['run', 'seed'], SEED_COMMAND],
  ['npm run flash-sale', ['run', 'flash-sale'], FLASH_SALE_COMMAND],
  ['npm run chaos', ['run', 'chaos'], CHAOS_COMMAND],
  ['npm run redrive', ['run', 'redrive'], REDRIVE_COMMAND],
  ['npm run cold-start', ['run', 'cold-start'], COLD_START_COMMAND],
  ['npm run fuzz', ['run', 'fuzz'], FUZZ_COMMAND],
  ['npm run logs', ['run', 'logs'], LOGS_COMMAND],
];

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command to its end (at most 60 s), as a user's shell would. */
const run = (args: string[], extra: string[]) =>
  new Promise<Ran>((resolve, reject) => {
    const withSeparator = args.includes('--') ? [...args, ...extra] : [...args, '--', ...extra];
    const child = spawn('npm', ['--silent', ...withSeparator], { cwd: ROOT, timeout: 60_000 });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({
        status,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });

/**
 * Every command's two runs (`--help` and an unknown option), started up front a few at a time: each is
 * a process that mostly waits on its own start, so running them side by side takes a fraction of the time.
 */
const ran = new Map<string, Promise<Ran>>();
beforeAll(() => {
  const queue = COMMANDS.flatMap(([name, args]) => [
    [`${name} --help`, args, ['--help']] as const,
    [`${name} --no-such-option`, args, ['--no-such-option']] as const,
  ]);
  let next = 0;
  const slots = Array.from({ length: 4 }, async () => {
    while (next < queue.length) {
      const [key, args, extra] = queue[next++]!;
      const result = run([...args], [...extra]);
      ran.set(key, result);
      await result.catch(() => undefined);
    }
  });
  return Promise.all(slots);
}, 180_000);
const resultOf = (name: string, extra: string) => ran.get(`${name} ${extra}`)!;

describe.each(COMMANDS)('%s', (name, _args, spec) => {
  test('--help prints the usage, every option of its parser with its default, and examples; exits 0', async () => {
    const result = await resultOf(name, '--help');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    // Exactly the help of its own table: nothing started, nothing else printed.
    expect(result.stdout).toBe(helpText(spec));
    expect(result.stdout).toMatch(/^Usage: /);
    expect(result.stdout).toContain('Examples:');
    for (const [name, option] of Object.entries(spec.options)) {
      const line = result.stdout.split('\n').find((l) => new RegExp(`(^|\\s)--${name}(\\s|$)`).test(l));
      expect([name, line]).toEqual([name, expect.any(String)]);
      expect(option.description.length).toBeGreaterThan(0);
      // An option with a value the parser fills in when it is absent says so.
      if (option.default !== undefined && option.default !== false)
        expect([name, line]).toEqual([
          name,
          expect.stringContaining(`(default: ${option.defaultText ?? String(option.default)})`),
        ]);
      if (option.type === 'string' && option.default === undefined)
        expect([name, option.defaultText]).toEqual([name, expect.any(String)]);
    }
  });

  test('an unknown option prints the usage to stderr and exits 2', async () => {
    const result = await resultOf(name, '--no-such-option');
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("Unknown option '--no-such-option'");
    expect(result.stderr).toContain(helpText(spec));
  });
});
