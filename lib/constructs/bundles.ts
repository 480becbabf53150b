import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AssetHashType, DockerImage, aws_lambda as lambda, Stage } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { type BuildOptions, buildSync } from 'esbuild';

const FUNCTIONS_DIR = join(__dirname, '..', '..', 'functions');
/** Where a bundle's files are staged from: a directory of the app's output per build, removed on exit. */
const BUILD_DIR_PREFIX = 'bundling-functions-';

export interface BundleOptions {
  /** Readable and mapped to the sources (`-c debugBundles=true`), for a debugger. */
  readonly debug: boolean;
  /** Ship each bundle's source map beside it (the stage's `sourceMaps`). */
  readonly sourceMaps: boolean;
}

/**
 * A function's code: its entry under `functions/` bundled by esbuild (no
 * Docker). Every function's entry is a file in `functions/<module>/handlers/`,
 * and the first function an app stages bundles them all in one esbuild run,
 * which parses the shared packages once for all of them: `cdk synth --no-validation`
 * of a stage took 5.9-7.5 s so, against 15.9-16.1 s with one run per function
 * (NodejsFunction; docs/decisions/0009). Each asset is then
 * staged as CDK stages any bundled asset (its hash is its output's), and
 * skipped where the app skips bundling (`aws:cdk:bundling-stacks`).
 */
export function bundledCode(scope: Construct, entry: string, options: BundleOptions): lambda.Code {
  if (!handlerEntries().includes(entry))
    throw new Error(
      `${entry} is not a function's entry: entries are the files of functions/<module>/handlers/`,
    );
  const outdir = Stage.of(scope)?.outdir;
  if (!outdir) throw new Error(`${scope.node.path} is not in an app`);
  return lambda.Code.fromAsset(join(FUNCTIONS_DIR, entry, '..'), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local bundling below always succeeds or throws.
      image: DockerImage.fromRegistry('no-docker-bundling'),
      // What is built, for CDK's cache of staged assets, which keys on these options (not on `local`):
      // the functions of one module share a source directory.
      command: ['esbuild', entry, JSON.stringify(options)],
      local: {
        tryBundle(outputDir) {
          const built = buildAll(outdir, options);
          for (const file of readdirSync(built[entry]!)) {
            copyFileSync(join(built[entry]!, file), join(outputDir, file));
          }
          return true;
        },
      },
    },
  });
}

let entriesRead: readonly string[] | undefined;

/** Every `functions/<module>/handlers/*.ts`, relative to `functions/`: read once a process. */
export function handlerEntries(): readonly string[] {
  entriesRead ??= readdirSync(FUNCTIONS_DIR, { withFileTypes: true })
    .filter((module) => module.isDirectory() && existsSync(join(FUNCTIONS_DIR, module.name, 'handlers')))
    .flatMap((module) =>
      readdirSync(join(FUNCTIONS_DIR, module.name, 'handlers'))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => `${module.name}/handlers/${file}`),
    )
    .sort();
  return entriesRead;
}

/** Builds made in this process: output directory and options → each entry's directory. */
const builds = new Map<string, Record<string, string>>();

/**
 * Bundles every entry at once into directories of `outdir`, one level down
 * as CDK's staging directories are, so that a source map's relative paths
 * still hold where its bundle is staged.
 */
function buildAll(outdir: string, options: BundleOptions): Record<string, string> {
  const entries = handlerEntries();
  const key = JSON.stringify([outdir, options]);
  const done = builds.get(key);
  if (done) return done;
  // e.g. bundling-functions-0-saga-handlers-steps/index.js
  const dirNameOf = (entry: string) =>
    `${BUILD_DIR_PREFIX}${builds.size}-${entry.replace(/\.ts$/, '').replaceAll('/', '-')}`;
  const dirOf = Object.fromEntries(entries.map((entry) => [entry, join(outdir, dirNameOf(entry))]));
  process.once('exit', () => {
    for (const dir of Object.values(dirOf)) rmSync(dir, { recursive: true, force: true });
  });
  buildSync({
    ...esbuildOptions(options),
    entryPoints: Object.fromEntries(
      entries.map((entry) => [`${dirNameOf(entry)}/index`, join(FUNCTIONS_DIR, entry)]),
    ),
    outdir,
  });
  builds.set(key, dirOf);
  return dirOf;
}

/** How esbuild bundles every function: see each option. */
function esbuildOptions({ debug, sourceMaps }: BundleOptions): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    target: 'node22',
    // A debug build (`-c debugBundles=true`; `npm start -- --debug` makes one) is readable and
    // mapped to the sources, so that breakpoints bind and stack traces name our files.
    minify: !debug,
    // Names are not kept: that took 6% of every bundle (20 KB). A stack trace's positions map to
    // the sources offline with the dev stage's index.js.map, which fits every stage's bundle of the
    // same commit (the code is the same; docs/operations.md). Not --enable-source-maps at run time:
    // it makes every thrown error (a lost optimistic-concurrency race, a 409) expensive on the hot path.
    keepNames: false,
    // A stage that keeps source maps (dev) ships each bundle's map beside it, for mapping a stack
    // trace to the sources; prod does not (StageConfig.sourceMaps).
    sourcemap: debug || sourceMaps,
    // The map points at the files themselves (relative to the bundle), for a debugger to open.
    sourcesContent: false,
    logLevel: 'error',
    // A CommonJS bundle (index.js) made from the packages' ES module builds: esbuild drops what a
    // function does not import from those (the AWS SDK's above all), which their CommonJS builds
    // do not let it do. The output is CommonJS, and import() becomes require(), because an ES module
    // import of one of Node's own modules runs every getter of its exports (node:http's load
    // undici): about a fifth of a sandbox's start, and of a Lambda cold start (docs/decisions/0010).
    format: 'cjs',
    supported: { 'dynamic-import': false },
    mainFields: ['module', 'main'],
  };
}
