// The local cloud's own tests: local-unit (Node only: no Java, no DynamoDB Local) and
// local-integration (DynamoDB Local, event-ruler, sandboxes; each file starts what it needs).
// The project's root jest.config.js runs these projects too, beside the product's.
const transform = { '^.+\\.ts$': 'ts-jest' };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Integration tests start DynamoDB Local or sandboxes; unit tests finish far inside this.
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
  ],
};
