module.exports = { ...require('../jest.preset.js'), testTimeout: 240_000 };
