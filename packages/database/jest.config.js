module.exports = require('../../jest.database.preset.js');
