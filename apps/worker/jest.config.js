module.exports = {
  ...require('../../jest.preset.js'),
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
