// The local cloud's own tests: local-unit (Node only: no Java, no local cloud),
// local-integration (the DynamoDB engine on disk, event-ruler, sandboxes; each file starts what it
// needs) and local-conformance (the DynamoDB engine against DynamoDB's documented behaviour).
// The project's root jest.config.js runs these projects too, beside the product's.
const transform = { '^.+\\.ts$': 'ts-jest' };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Integration tests start sandboxes, child processes and event-ruler's JVM; unit tests finish far inside this.
  testTimeout: 60000,
  projects: [
    {
      ...common,
      rootDir: __dirname,
      displayName: 'local-unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      ...common,
      rootDir: __dirname,
      displayName: 'local-integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
    },
    {
      // The DynamoDB conformance suite: the engine in local/dynamodb, over the AWS SDK, in-process;
      // DYNAMODB_CONFORMANCE_TARGET=aws runs the same cases against real DynamoDB (see its support/target.ts).
      ...common,
      rootDir: __dirname,
      displayName: 'local-conformance',
      testMatch: ['<rootDir>/test/conformance/**/*.test.ts'],
    },
  ],
};
