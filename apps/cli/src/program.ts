import { ConfigError, HERALD_VERSION, HeraldConfig, StartupError } from '@herald/core';
import { Command, CommanderError, Help, Option } from 'commander';
import { CliError, EXIT, EXIT_CODES_HELP, oneLine, UsageError } from './cli-errors';
import { registerAdminCommands } from './commands/admin';
import { registerAuditCommands } from './commands/audit';
import { API_OPTIONS_HEADING, ApiDefaults, ApiOptions, connect } from './commands/api-command';
import { registerDeliveryCommands } from './commands/deliveries';
import { registerSubscriptionCommands } from './commands/subscriptions';

/** What main.ts hands the commands: the environment, parsed only when a command needs it. */
export interface HeraldContext {
  /** The whole configuration, for start and migrate. */
  config(): HeraldConfig;
  /** PORT and HERALD_ADMIN_KEY alone, for the commands that call the api. */
  apiDefaults(): ApiDefaults;
  env: NodeJS.ProcessEnv;
}

const ABOUT_THE_API_COMMANDS = `The commands that manage Herald call the running api like any other client:
  --url <url>   the api (default http://127.0.0.1:$PORT)
  --key <key>   an API key (default $HERALD_ADMIN_KEY): an admin key, or for the
                webhook, events and deliveries commands also a key of the application's account
  --json        print the api's answer as JSON on stdout, and nothing else there
Lists are paged: --limit <n>, then --cursor with the cursor the previous page printed.
Configuration comes from the environment; see the README.`;

/** Runs `herald <argv>` and answers with the exit code; every failure it knows is one line on stderr. */
export async function runHerald(argv: string[], context: HeraldContext): Promise<number> {
  let exitCode: number = EXIT.OK;
  let running: Command | null = null;
  const program = buildProgram(context, (code) => (exitCode = code));
  program.hook('preAction', (_root, command) => {
    running = command;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return exitOfCommander(error);
    if (error instanceof UsageError) {
      process.stderr.write(`herald: ${error.message} (see ${commandPath(running ?? program)} --help)\n`);
      return error.exitCode;
    }
    if (error instanceof CliError) {
      process.stderr.write(`herald: ${error.message}\n`);
      return error.exitCode;
    }
    // Start-up failures name the variable or the database; they are the operator's to fix, not a bug.
    if (error instanceof StartupError || error instanceof TypeError) {
      process.stderr.write(`herald: ${error.message}\n`);
      return EXIT.API_ERROR;
    }
    throw error;
  }
}

function buildProgram(context: HeraldContext, exitWith: (code: number) => void): Command {
  const program = new Command('herald')
    .description(`Herald ${HERALD_VERSION}: run Herald, migrate its database, manage it through the running api.`)
    .version(HERALD_VERSION, '-V, --version', "print Herald's version")
    .helpOption('-h, --help', 'print the help of herald or of a command')
    .addHelpText(
      'after',
      `\n${ABOUT_THE_API_COMMANDS}\n\n${EXIT_CODES_HELP}\n\n"herald <command> --help" tells more, e.g. herald deliveries recover --help`,
    )
    .configureHelp({
      sortSubcommands: false,
      // A command's own options first, then --url, --key and --json, which every api command shares.
      groupItems<T extends Command | Option>(this: Help, unsorted: T[], visible: T[], getGroup: (item: T) => string): Map<string, T[]> {
        const groups = Help.prototype.groupItems.bind(this)(unsorted, visible, getGroup);
        const shared = groups.get(API_OPTIONS_HEADING);
        if (shared) groups.delete(API_OPTIONS_HEADING);
        return shared ? groups.set(API_OPTIONS_HEADING, shared) : groups;
      },
    })
    .showSuggestionAfterError(true)
    // Set before the subcommands are made, so they inherit it: commander throws instead of exiting.
    .exitOverride();

  program.commandsGroup('Running Herald:');
  program
    .command('start')
    .description('migrate, then run the api and the worker (embedded PostgreSQL under HERALD_DATA_DIR when DATABASE_URL is unset)')
    .addHelpText('after', '\nExit codes: 0 after a clean shutdown (SIGTERM, Ctrl-C); 1 when it cannot start or keeps failing at start-up.')
    .action(async () => {
      const { start } = await import('./commands/start');
      exitWith(await start(context.config(), context.env));
    });
  program
    .command('migrate')
    .description('apply pending migrations')
    .option('--check', 'change nothing: report whether the database has drifted from prisma/schema.prisma')
    .addHelpText('after', '\nExit codes: 0 applied (or, with --check, no drift); 1 drift (with the SQL that would reconcile) or failure.')
    .action(async (options: { check?: boolean }) => {
      const { migrate } = await import('./commands/migrations');
      exitWith(await migrate(context.config(), options.check ?? false));
    });
  program
    .command('migration')
    .description('write migrations')
    .command('new <name>')
    .description('write prisma/migrations/<timestamp>_<name> from a change to prisma/schema.prisma (needs DATABASE_URL)')
    .action(async (name: string) => {
      const { newMigration } = await import('./commands/migrations');
      exitWith(await newMigration(context.config(), name));
    });

  program.commandsGroup('Managing Herald through the running api:');
  let defaults: ApiDefaults | null = null;
  const api = (options: ApiOptions) =>
    connect(options, () => {
      try {
        return (defaults ??= context.apiDefaults());
      } catch (error) {
        if (error instanceof ConfigError) throw new UsageError(`invalid environment: ${error.problems.join('; ')}`);
        throw error;
      }
    });
  registerAdminCommands(program, api);
  registerDeliveryCommands(program, api);
  registerSubscriptionCommands(program, api);
  registerAuditCommands(program, api);

  oneLineErrors(program);
  return program;
}

/** Commander's own usage errors as one line naming the command's help; nothing after it. */
function oneLineErrors(command: Command): void {
  command.configureOutput({
    outputError: (message, write) => write(`herald: ${oneLine(message.replace(/^error: /, ''))} (see ${commandPath(command)} --help)\n`),
  });
  for (const subcommand of command.commands) oneLineErrors(subcommand);
}

function exitOfCommander(error: CommanderError): number {
  // --help, --version and `help <command>` succeed; everything else commander raises is a usage
  // error, a command group called without a command (its help went to stderr) included.
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.OK;
  if (error.code === 'commander.help' && error.exitCode === 0) return EXIT.OK;
  return EXIT.USAGE;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}
