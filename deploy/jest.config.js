// The manifests' specs run the commands they name in the images' runtime tree, against a real
// PostgreSQL (one database per file, made by the shared global setup's helpers).
module.exports = { ...require('../jest.database.preset.js'), testTimeout: 180_000 };
