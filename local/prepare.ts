import { prepareDynamoDbLocal } from './dynamodb';

/**
 * Run by `npm ci` / `npm install` (the root `postinstall`): fetches DynamoDB
 * Local's jars with Maven and compiles its launcher into local/.cache, so that
 * the first `npm start` does not wait for either (about 7 s with Maven's
 * repository warm, far longer from an empty one).
 *
 * A failure (no Java or Maven, Maven Central unreachable) is reported and
 * does not fail the install: the CDK app, its tests that need no local cloud,
 * and `cdk deploy` do not need Java, and a machine that only deploys should
 * install. Nothing half-done is left to be taken for done (the jars count as
 * fetched, and the launcher as compiled, only once a marker is written after
 * success), so `npm start` and the integration tests do the same work again
 * and fail there, with the same error, if it still cannot be done.
 */
async function main() {
  const started = performance.now();
  try {
    await prepareDynamoDbLocal();
    console.log(
      `[local] DynamoDB Local ready in local/.cache (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
  } catch (error) {
    console.warn(
      [
        '[local] WARNING: DynamoDB Local could not be prepared during the install:',
        `  ${(error as Error).message.split('\n').join('\n  ')}`,
        '  The install goes on (deploying needs no Java); `npm start` and `npm test` will try again',
        '  and fail with this error until Java 17+ and Maven can fetch from Maven Central.',
      ].join('\n'),
    );
  }
}

void main();
