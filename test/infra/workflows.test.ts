import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { parse } from 'yaml';
import { STAGES } from '../../lib/stage-config';
import { ensureLoadTools } from '../../load/tools';
import { actionlint, ensureActionlint, formatFinding, workflowFiles } from '../../scripts/actionlint';

/**
 * The pipeline example (.github/workflows) cannot run here: it is linted with
 * actionlint, and every command it calls is checked to exist — each `npm run
 * X` a script, each `npx Y` an installed bin, each file of the repository it
 * names present.
 */
const ROOT = join(__dirname, '..', '..');
const files = workflowFiles();

describe('the GitHub workflows', () => {
  beforeAll(() => {
    // The first run builds the pinned actionlint from its Go module into local/.cache (a minute or two).
    ensureActionlint((m) => console.log(m));
  }, 600_000);

  test('are there: the tests on pull requests, the deployment on main', () => {
    expect(files.map((f) => basename(f))).toEqual(['ci.yml', 'deploy-stage.yml', 'deploy.yml']);
  });

  test('actionlint finds nothing in them', () => {
    expect(actionlint(files).map(formatFinding)).toEqual([]);
  }, 60_000);

  test('actionlint is live: a broken workflow is reported', () => {
    const dir = mkdtempSync(join(tmpdir(), 'workflows-'));
    try {
      const broken = join(dir, 'broken.yml');
      // An expression of a context that has no such property, and an input the action does not take.
      const workflow = [
        'on: push',
        'jobs:',
        '  a:',
        '    runs-on: ubuntu-24.04',
        '    steps:',
        `      - run: echo $\{{ github.nope }}`,
        '      - uses: actions/checkout@v6',
        '        with:',
        '          no-such-input: 1',
      ];
      writeFileSync(broken, `${workflow.join('\n')}\n`);
      const messages = actionlint([broken]).map((f) => f.message);
      expect(messages).toEqual(
        expect.arrayContaining([
          expect.stringContaining('nope'),
          expect.stringContaining('input "no-such-input" is not defined'),
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

interface Step {
  readonly run?: string;
  readonly uses?: string;
  readonly with?: Record<string, unknown>;
  readonly 'working-directory'?: string;
}
interface Workflow {
  readonly jobs: Record<string, { uses?: string; steps?: Step[]; with?: Record<string, unknown> }>;
}

/** Every command a workflow runs: the script of each `run:` step, with the directory it runs in. */
function runSteps(file: string) {
  const workflow = parse(readFileSync(file, 'utf8')) as Workflow;
  return Object.entries(workflow.jobs).flatMap(([job, { steps = [] }]) =>
    steps
      .filter((s) => s.run !== undefined)
      .map((s) => ({
        where: `${relative(ROOT, file)} ${job}`,
        run: s.run!,
        cwd: s['working-directory'] ?? '.',
      })),
  );
}

/** The words of a script's lines, quotes removed (no shell parsing beyond that: the scripts are plain). */
const wordsOf = (line: string) =>
  line
    .split(/\s+/)
    .map((w) => w.replace(/["';]/g, ''))
    .filter(Boolean);

/** npx's own flags before the command: `--prefix DIR` names where its bins are; the others take no value. */
function npxCommand(words: string[]): { bin: string; prefix: string | undefined; args: string[] } {
  let prefix: string | undefined;
  let i = 0;
  while (i < words.length && words[i]!.startsWith('-')) {
    if (words[i] === '--prefix') {
      prefix = words[i + 1];
      i += 2;
    } else i += 1;
  }
  return { bin: words[i] ?? '', prefix, args: words.slice(i + 1) };
}

/** The repository's own paths: under a tracked top-level directory, not git-ignored (outputs are). */
const trackedTop = new Set(
  spawnSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .stdout.split('\n')
    .filter((f) => f.includes('/'))
    .map((f) => f.split('/')[0]!),
);
const ignored = (path: string) => spawnSync('git', ['check-ignore', '-q', path], { cwd: ROOT }).status === 0;
const isRepositoryPath = (word: string) =>
  /^[\w.-]+(\/[\w.-]+)+\/?$/.test(word) && trackedTop.has(word.split('/')[0]!) && !ignored(word);

describe('every command the workflows call exists', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const steps = files.flatMap(runSteps);

  test('the workflows run commands (the checks below see them)', () => {
    const all = steps.map((s) => s.run).join('\n');
    for (const expected of ['npm ci', 'npm test', 'npm run test-tools', 'npx cdk deploy', 'artillery run'])
      expect(all).toContain(expected);
  });

  test('each `npm X` is npm’s own command, and each `npm run X` a script of package.json', () => {
    const problems: string[] = [];
    for (const { where, run } of steps) {
      for (const match of run.matchAll(/\bnpm\s+([\w:-]+)(?:\s+([\w:-]+))?/g)) {
        const [, command, script] = match;
        if (command === 'run') {
          if (!script || !(script in pkg.scripts))
            problems.push(`${where}: npm run ${script}: no such script`);
        } else if (command === 'test') {
          if (!('test' in pkg.scripts)) problems.push(`${where}: npm test: no test script`);
        } else if (command !== 'ci') problems.push(`${where}: npm ${command}: not checked; add it here`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('each `npx Y` is a bin installed by npm ci or the load tools (npx never downloads), with its arguments checked', () => {
    // `npx --prefix load` runs the load tools', which a workflow installs first (npm run load-tools).
    ensureLoadTools();
    const problems: string[] = [];
    let seen = 0;
    for (const { where, run, cwd } of steps) {
      for (const line of run.split('\n')) {
        const words = wordsOf(line);
        const at = words.indexOf('npx');
        if (at < 0) continue;
        seen++;
        const { bin, prefix, args } = npxCommand(words.slice(at + 1));
        const binDir = join(ROOT, cwd, prefix ?? '.', 'node_modules', '.bin');
        if (!existsSync(join(binDir, bin)))
          problems.push(`${where}: npx ${bin}: not in ${relative(ROOT, binDir)} after npm ci`);
        if (bin === 'tsx' && !existsSync(join(ROOT, cwd, args[0] ?? '')))
          problems.push(`${where}: npx tsx ${args[0]}: no such file`);
        for (const arg of args) {
          const stage = /^stage=(.*)$/.exec(arg)?.[1];
          if (stage && !stage.startsWith('$') && !(STAGES as readonly string[]).includes(stage))
            problems.push(`${where}: ${arg}: no such stage`);
        }
      }
    }
    expect(seen).toBeGreaterThanOrEqual(4);
    expect(problems).toEqual([]);
  });

  test('each file of the repository a workflow names is there (load/mix.yml included)', () => {
    const named = new Set<string>();
    for (const file of files) {
      const workflow = parse(readFileSync(file, 'utf8')) as Workflow;
      for (const job of Object.values(workflow.jobs)) {
        if (job.uses?.startsWith('./')) named.add(job.uses.slice(2));
        for (const step of job.steps ?? []) {
          for (const [key, value] of Object.entries(step.with ?? {}))
            if (key.endsWith('-file') && typeof value === 'string') named.add(value);
        }
      }
    }
    for (const { run, cwd } of steps) {
      for (const word of wordsOf(run)) {
        const path = join(cwd, word);
        if (!word.includes('$') && isRepositoryPath(path)) named.add(path);
      }
    }
    expect([...named].sort()).toEqual(
      expect.arrayContaining(['.github/workflows/deploy-stage.yml', '.nvmrc', 'load/mix.yml']),
    );
    expect([...named].sort().filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});

describe("what the workflows' Artillery runs read is made before them", () => {
  /** The payload an Artillery script reads, relative to the repository (its `config.payload.path` is the script's). */
  const payloadOf = (script: string) => {
    const { config } = parse(readFileSync(join(ROOT, script), 'utf8')) as {
      config: { payload?: { path: string } };
    };
    return config.payload && relative(ROOT, join(ROOT, script, '..', config.payload.path));
  };

  test('each `artillery run` of a script with a payload comes after a step of its job that seeds it', () => {
    const problems: string[] = [];
    let runs = 0;
    for (const file of files) {
      const workflow = parse(readFileSync(file, 'utf8')) as Workflow;
      for (const [job, { steps = [] }] of Object.entries(workflow.jobs)) {
        const earlier: string[] = [];
        for (const { run } of steps) {
          if (run === undefined) continue;
          const script = /artillery run .*?(load\/[\w-]+\.yml)/.exec(run)?.[1];
          if (script) {
            runs++;
            const payload = payloadOf(script);
            // `npm run seed` writes load/out/seed.csv unless told otherwise (--out, --payload).
            const seeds = earlier.some((r) => /\bnpm run seed\b/.test(r) && !/--(out|payload)\b/.test(r));
            if (payload === 'load/out/seed.csv' && !seeds)
              problems.push(
                `${relative(ROOT, file)} ${job}: artillery run ${script} reads ${payload}, which no step before it seeds`,
              );
            else if (payload !== undefined && payload !== 'load/out/seed.csv')
              problems.push(
                `${relative(ROOT, file)} ${job}: ${script} reads ${payload}: teach this test what writes it`,
              );
          }
          earlier.push(run);
        }
      }
    }
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(problems).toEqual([]);
  });
});
