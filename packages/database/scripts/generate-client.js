// Generates the Prisma client into src/generated/prisma from the repository's prisma/schema.prisma.
// Works offline: PRISMA_SCHEMA_ENGINE_BINARY points at a stub (see schema-engine-stub.sh).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const schema = path.resolve(__dirname, '../../../prisma/schema.prisma');
const prismaCli = require.resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [prismaCli, 'generate', '--schema', schema], {
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: path.join(__dirname, 'schema-engine-stub.sh'),
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(result.status ?? 1);
