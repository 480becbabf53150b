import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runCommand } from './run-command';
import { withThisNode } from './this-node';

/** The CDK app the local cloud runs: the project this package is a workspace of. */
export const PROJECT_ROOT = join(__dirname, '..');

/**
 * The app's sources, as its cdk.json names them for `cdk watch`
 * (`watch.include`, directories or files; not globs, which this does not
 * expand): the package knows no directory of the app by name.
 */
export function appSources(root = PROJECT_ROOT): string[] {
  const config = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as {
    watch?: { include?: unknown };
  };
  const include = config.watch?.include;
  if (
    !Array.isArray(include) ||
    include.length === 0 ||
    !include.every((p) => typeof p === 'string' && !/[*?[{]/.test(p))
  ) {
    throw new Error(
      `${join(root, 'cdk.json')} names no sources in watch.include (directories or files, no globs): the local cloud could not tell when the app changed`,
    );
  }
  return include;
}

const STAMP = '.local-synth-inputs';

function* files(path: string): Generator<string> {
  if (!existsSync(path)) return;
  if (statSync(path).isFile()) {
    yield path;
    return;
  }
  for (const entry of readdirSync(path).sort()) yield* files(join(path, entry));
}

/** A hash of everything the synthesized app depends on, and the context it is synthesized with. */
function inputsHash(context: Record<string, string>): string {
  const hash = createHash('sha256');
  // What the synthesized app depends on: its sources, its CDK settings and its locked dependencies.
  for (const input of [...appSources(), 'cdk.json', 'package-lock.json']) {
    for (const file of files(join(PROJECT_ROOT, input))) {
      hash.update(relative(PROJECT_ROOT, file)).update(readFileSync(file));
    }
  }
  return hash.update(JSON.stringify(context)).digest('hex');
}

/**
 * Synthesizes the CDK app into `outDir` offline with the project's own CDK
 * CLI, unless the assembly there was made from the same sources and context.
 * The CLI runs as a child process without blocking this one, so that a
 * running cloud (`npm start -- --watch` resynthesizing) serves meanwhile.
 */
export async function synthesize(
  outDir: string,
  context: Record<string, string>,
  log: (m: string) => void,
): Promise<string> {
  const hash = inputsHash(context);
  const stamp = join(outDir, STAMP);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
    log(`cloud assembly ${relative(PROJECT_ROOT, outDir)} is up to date`);
    return outDir;
  }
  log(
    `synthesizing the app (${Object.entries(context)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')})`,
  );
  const args = [
    'synth',
    '--quiet',
    // Not CDK's built-in CloudFormation validation: it only warns, and its WebAssembly rule engine
    // cost 4.7 s of every synth here (docs/decisions/0009). The cloud runs the template; it does not
    // deploy it. `npm test` lints every stage's template with cfn-lint itself
    // (test/infra/cfn-lint.test.ts), and `cdk synth` and `cdk deploy` still validate. cdk-nag's
    // checks run either way.
    '--no-validation',
    '--output',
    outDir,
    ...Object.entries(context).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ];
  const result = await runCommand(join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk'), args, {
    cwd: PROJECT_ROOT,
    env: withThisNode({ ...process.env, CDK_DISABLE_VERSION_CHECK: '1' }),
  });
  if (result.status !== 0) {
    throw new Error(`cdk synth failed (exit ${result.status}):\n${result.output}`);
  }
  writeFileSync(stamp, hash);
  return outDir;
}
