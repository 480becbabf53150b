import { join } from 'node:path';
import { prepareDynamoDbLocal } from './dynamodb';
import { PROJECT_ROOT, synthesize } from './synth';

/**
 * Run by `npm ci` / `npm install` (the root `postinstall`), so that the first
 * `npm start` has nothing slow left to do before it listens. Both at once:
 *
 * - DynamoDB Local's jars are fetched with Maven and its launcher compiled
 *   into local/.cache (about 7 s with Maven's repository warm, 13 s from an
 *   empty one);
 * - the app is synthesized into cdk.out as `npm start` (stage dev, no other
 *   context) would (15 s of CPU, half a minute on a busy 2-core machine: the
 *   longest part of a first start). `npm start` finds it up to date, and
 *   synthesizes again if anything it depends on changed since. Skipped
 *   where the suite or a deploy synthesizes its own (`CI` set), or with
 *   `LOCAL_PREPARE_SYNTH=0`.
 *
 * A failure (no Java or Maven, Maven Central unreachable, an app that does
 * not synthesize) is reported and does not fail the install: the CDK app,
 * its tests that need no local cloud, and `cdk deploy` do not need Java, and
 * a machine that only deploys should install. Nothing half-done is taken for
 * done later (the jars count as fetched, the launcher as compiled and the
 * assembly as synthesized only once a marker is written after success), so
 * `npm start` and the integration tests do the same work again and fail
 * there, with the same error, if it still cannot be done.
 */
async function main() {
  const started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const log = (m: string) => console.log(`[local] ${m}`);
  const warn = (what: string, error: Error) =>
    console.warn(
      [
        `[local] WARNING: ${what} during the install:`,
        `  ${error.message.split('\n').join('\n  ')}`,
        '  The install goes on (deploying needs no Java); `npm start` and `npm test` will try again',
        '  and fail with this error until it is fixed (Java 17+ and Maven fetching from Maven Central).',
      ].join('\n'),
    );
  const skipSynth = process.env.CI || process.env.LOCAL_PREPARE_SYNTH === '0';
  await Promise.all([
    prepareDynamoDbLocal().then(
      () => log(`DynamoDB Local ready in local/.cache (${seconds()})`),
      (error: Error) => warn('DynamoDB Local could not be prepared', error),
    ),
    skipSynth
      ? Promise.resolve()
      : synthesize(join(PROJECT_ROOT, 'cdk.out'), { stage: 'dev' }, log).then(
          () => log(`cdk.out ready for npm start (${seconds()})`),
          (error: Error) => warn('the app could not be synthesized', error),
        ),
  ]);
}

void main();
