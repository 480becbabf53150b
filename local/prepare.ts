import { join } from 'node:path';
import { PROJECT_ROOT, synthesize } from './synth';

/**
 * Run by `npm ci` / `npm install` (the root `postinstall`), so that the first
 * `npm start` has nothing slow left to do before it listens: the app is
 * synthesized into cdk.out as `npm start` (stage dev, no other context)
 * would (15 s of CPU, half a minute on a busy 2-core machine: the longest
 * part of a first start). `npm start` finds it up to date, and synthesizes
 * again if anything it depends on changed since. Skipped where the suite or a
 * deploy synthesizes its own (`CI` set), or with `LOCAL_PREPARE_SYNTH=0`.
 *
 * A failure (an app that does not synthesize) is reported and does not fail
 * the install: `npm start` synthesizes again and fails there, with the same
 * error, if it still cannot be done.
 */
async function main() {
  if (process.env.CI || process.env.LOCAL_PREPARE_SYNTH === '0') return;
  const started = performance.now();
  const log = (m: string) => console.log(`[local] ${m}`);
  try {
    await synthesize(join(PROJECT_ROOT, 'cdk.out'), { stage: 'dev' }, log);
    log(`cdk.out ready for npm start (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    console.warn(
      [
        '[local] WARNING: the app could not be synthesized during the install:',
        `  ${(error as Error).message.split('\n').join('\n  ')}`,
        '  The install goes on; `npm start` will synthesize again and fail with this error until it is fixed.',
      ].join('\n'),
    );
  }
}

void main();
