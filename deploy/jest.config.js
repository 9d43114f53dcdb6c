// The manifests' specs run the commands they name in the images' runtime trees, against a real
// PostgreSQL. One file at a time: the runtime-tree spec's processes already keep both cores busy.
module.exports = { ...require('../jest.database.preset.js'), testTimeout: 180_000, maxWorkers: 1 };
