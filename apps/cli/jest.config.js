// These specs run the built cli (dist/) as a child process, as an operator would.
module.exports = {
  ...require('../../jest.preset.js'),
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 120_000,
  maxWorkers: 2,
};
