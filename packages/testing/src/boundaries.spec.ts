import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * The import rules of eslint.config.mjs are what keeps ARCHITECTURE.md's boundaries true:
 * each is tried here on a line of code as if it were in the file named.
 */
const root = path.resolve(__dirname, '../../..');

function lint(file: string, code: string): string[] {
  const run = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', file, '--format', 'json'],
    {
      cwd: root,
      input: code,
      encoding: 'utf8',
    },
  );
  if (run.status !== 0 && run.status !== 1) throw new Error(`eslint failed to run: ${run.stderr}`);
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result.messages.map((message) => `${message.ruleId}: ${message.message}`);
}

describe('the import boundaries (eslint.config.mjs)', () => {
  it.each([
    ['apps/worker/src/delivery/x.ts', "import { PrismaService } from '@herald/database';", /never loads Prisma/],
    ['apps/worker/src/delivery/x.ts', "import { PrismaClient } from '@prisma/client';", /packages\/database's own/],
    ['apps/api/src/x.ts', "import { DeliveryQueueRepository } from '@herald/database/dist/queue';", /through its entry points/],
    ['apps/cli/test/x.ts', "import { Sink } from '../../worker/test/support/sink';", /No app imports another app/],
    ['apps/api/src/x.ts', "import { Pool } from 'pg';", /packages\/database's own/],
    ['apps/cli/src/x.ts', "import { WorkerModule } from '@herald/worker';", /No app imports another app/],
    ['packages/client/src/x.ts', "import { AppError } from '@herald/contracts';", /@herald\/client stands alone/],
    ['apps/worker/src/delivery/x.ts', "import { trace } from '@opentelemetry/api';", /OpenTelemetry is loaded only when traces are on/],
    ['packages/runtime/src/tracing/tracing.ts', "import { trace } from '@opentelemetry/api';", /OpenTelemetry is loaded only/],
  ])('%s: %s is refused', (file, code, reason) => {
    expect(lint(file, `${code}\nexport const used = [${code.match(/\{ (\w+) \}/)?.[1]}];\n`)).toEqual([expect.stringMatching(reason)]);
  });

  it.each([
    ['apps/worker/src/delivery/x.ts', "import { DeliveryQueueRepository } from '@herald/database/queue';"],
    ['apps/api/src/x.ts', "import { WebhookRepository } from '@herald/database';"],
    ['packages/database/src/x.ts', "import { Pool } from 'pg';"],
    ['apps/api/test/x.ts', "import { sql } from '@herald/database/testing';"],
    ['apps/cli/src/x.ts', "import { createHeraldClient } from '@herald/client';"],
    ['packages/runtime/src/tracing/otel-tracing.ts', "import { trace } from '@opentelemetry/api';"],
  ])('%s: %s is allowed', (file, code) => {
    expect(lint(file, `${code}\nexport const used = [${code.match(/\{ (\w+) \}/)?.[1]}];\n`)).toEqual([]);
  });
});
