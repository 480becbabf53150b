import { join } from 'node:path';
import { PROJECT_ROOT, synthesize } from './synth';

/**
 * Run by `npm ci` / `npm install` (the root `postinstall`), so that the first
 * `npm start` has nothing slow left to do before it listens:
 *
 * - the app is synthesized into cdk.out as `npm start` (stage dev, no other
 *   context) would (about 7 s on a 2-core machine, its bundles included: the
 *   longest part of a first start). `npm start` finds it up to date, and
 *   synthesizes again if anything it depends on changed since;
 * - the local cloud then starts once on free ports and stops, so that what a
 *   start compiles is cached on disk (tsx's transforms of the local cloud's
 *   TypeScript, V8's code for each function's bundle): a new clone's first
 *   `npm start` answers as soon as the next ones do. Nothing is invoked, and
 *   nothing written but those caches and the run directory's empty logs.
 *
 * Skipped where the suite or a deploy synthesizes its own (`CI` set), or with
 * `LOCAL_PREPARE_SYNTH=0`. A failure is reported and does not fail the
 * install: `npm start` does the same work again and fails there, with the
 * same error, if it still cannot be done.
 */
async function main() {
  if (process.env.CI || process.env.LOCAL_PREPARE_SYNTH === '0') return;
  const log = (m: string) => console.log(`[local] ${m}`);
  const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
  const started = performance.now();
  try {
    await synthesize(join(PROJECT_ROOT, 'cdk.out'), { stage: 'dev' }, log);
    log(`cdk.out ready for npm start (${seconds(started)})`);
  } catch (error) {
    return warn('the app could not be synthesized', error);
  }
  const startedOnce = performance.now();
  try {
    // Loaded here, not at the top: where this step is skipped (CI), the install does not load the cloud.
    const { startLocalCloud } = require('./cloud') as typeof import('./cloud');
    const cloud = await startLocalCloud({ port: 0, awsPort: 0, log: () => {} });
    await cloud.stop();
    log(`the local cloud started once, so that npm start finds its code compiled (${seconds(startedOnce)})`);
  } catch (error) {
    warn('the local cloud could not start', error);
  }
}

function warn(what: string, error: unknown) {
  console.warn(
    [
      `[local] WARNING: ${what} during the install:`,
      `  ${(error as Error).message.split('\n').join('\n  ')}`,
      '  The install goes on; `npm start` will try again and fail with this error until it is fixed.',
    ].join('\n'),
  );
}

void main();
