// Delivery specs run the worker in-process and as processes, against a sink on 127.0.0.1.
module.exports = { ...require('../../jest.database.preset.js'), testTimeout: 60_000 };
