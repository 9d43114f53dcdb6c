// The smoke run takes about 3 minutes on a quiet machine and 5 or more on a slow one (2026-11-26:
// every benchmark two to three times slower); 240 s failed it there. Its figures are not checked.
module.exports = { ...require('../jest.preset.js'), testTimeout: 600_000 };
