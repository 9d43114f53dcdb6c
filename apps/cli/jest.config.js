// These specs run the built cli (dist/) as a child process, as an operator would.
module.exports = { ...require('../../jest.database.preset.js'), testTimeout: 120_000 };
