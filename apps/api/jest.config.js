// End-to-end specs boot the real app (configureApp) against real PostgreSQL: one migrated
// template per run, one cloned database per file (test/setup/global-setup.ts).
module.exports = {
  ...require('../../jest.preset.js'),
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 30_000,
  maxWorkers: 2,
};
