// End-to-end specs boot the real app (configureApp) against real PostgreSQL.
module.exports = { ...require('../../jest.database.preset.js'), testTimeout: 30_000 };
