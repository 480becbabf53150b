// Three projects: unit (pure, no I/O), infra (CDK assertions on the synthesized
// templates), integration (against the local cloud and its DynamoDB engine); and the
// local cloud's own (local/jest.config.js: local-unit, local-integration, local-conformance).
const local = require('./local/jest.config.js');

const transform = { '^.+\\.ts$': 'ts-jest' };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Integration tests drive a real local cloud; unit tests finish far inside this.
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      globalTeardown: '<rootDir>/test/integration/global-teardown.ts',
    },
    ...local.projects,
  ],
};
