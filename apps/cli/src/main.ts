#!/usr/bin/env node
import { parseHeraldConfig, StartupError } from '@herald/core';
import { parseArgs } from 'node:util';
import { admin } from './commands/admin';
import { migrate, newMigration } from './commands/migrations';
import { start } from './commands/start';

const USAGE = `herald <command>

  start                                   migrate, then run the api and the worker
                                          (embedded PostgreSQL under HERALD_DATA_DIR when DATABASE_URL is unset)
  migrate [--check]                       apply pending migrations; --check reports drift from prisma/schema.prisma
  migration new <name>                    write prisma/migrations/<timestamp>_<name> from a schema change

  accounts list
  accounts create --name <name>
  applications list [--account <id>]
  applications create --account <id> --name <name> [--id <n>]
  api-keys list [--account <id>]                (prefix, name, scope and dates; never the key)
  api-keys create --account <id> --name <name>
  api-keys revoke <key id>
  event-types create --name <name> [--description <text>]
      admin commands call a running Herald: --url (default http://127.0.0.1:$PORT),
      --key (default $HERALD_ADMIN_KEY); lists are paged: --limit <n>, --cursor <next_cursor>

Configuration comes from the environment; see the README.`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      check: { type: 'boolean' },
      url: { type: 'string' },
      key: { type: 'string' },
      name: { type: 'string' },
      account: { type: 'string' },
      id: { type: 'string' },
      description: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
    },
  });
  if (values.help || positionals.length === 0) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const config = parseHeraldConfig(process.env);
  const [command, ...rest] = positionals;
  switch (command) {
    case 'start':
      return start(config, process.env);
    case 'migrate':
      return migrate(config, values.check ?? false);
    case 'migration':
      if (rest[0] !== 'new' || !rest[1]) break;
      return newMigration(config, rest[1]);
    default:
      return admin(config, positionals, values);
  }
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof StartupError || error instanceof TypeError ? `herald: ${(error as Error).message}` : error);
    process.exit(1);
  },
);
