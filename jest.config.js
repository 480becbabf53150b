// Four projects: unit (pure, no I/O), infra (CDK assertions on the synthesized
// templates), tools (the tests that run external linters and the CLIs), integration
// (against the local cloud and its DynamoDB engine); and the local cloud's own (local/jest.config.js: local-unit, local-integration, local-conformance).
const local = require('./local/jest.config.js');

const transform = { '^.+\\.ts$': 'ts-jest' };
const TOOLS = [
  '/test/infra/bundles.test.ts',
  '/test/infra/cfn-lint.test.ts',
  '/test/infra/checkov.test.ts',
  '/test/infra/workflows.test.ts',
  '/test/unit/cli-help.test.ts',
  '/test/unit/load-scripts.test.ts',
];
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Integration tests drive a real local cloud; unit tests finish far inside this.
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      testPathIgnorePatterns: TOOLS,
    },
    {
      ...common,
      displayName: 'infra',
      testMatch: ['<rootDir>/test/infra/**/*.test.ts'],
      testPathIgnorePatterns: TOOLS,
    },
    // The tests that run programs of their own: esbuild over every function for two stages (the bundles'
    // sizes), the linters of the templates (cfn-lint, Checkov: Python) and of the workflows (actionlint:
    // Go), and every CLI's --help. In npm test, not in the quick loop of test:unit and test:infra.
    { ...common, displayName: 'tools', testMatch: TOOLS.map((path) => `<rootDir>${path}`) },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      setupFiles: ['<rootDir>/test/integration/integration-worker.ts'],
      globalTeardown: '<rootDir>/test/integration/global-teardown.ts',
    },
    ...local.projects,
  ],
};
