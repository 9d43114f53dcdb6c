// For specs that need PostgreSQL: one migrated template database per run, and each test file
// clones its own from it (packages/database/src/testing). Runs after the build, like every test.
module.exports = {
  ...require('./jest.preset.js'),
  globalSetup: require.resolve('./packages/database/dist/testing/jest-global-setup.js'),
  globalTeardown: require.resolve('./packages/database/dist/testing/jest-global-teardown.js'),
  maxWorkers: 2,
};
