import { Command } from 'commander';
import { HeraldApi } from '../api/herald-api';
import { column, printItem, printList } from '../output/print';
import { apiCommand, ApiOptions, operatorsValue, PageOptions, paged, pageQuery, positiveInteger } from './api-command';
import { jsonObjectFile } from './json-arguments';

const ACCOUNT_COLUMNS = [column('ID'), column('NAME')];
const APPLICATION_COLUMNS = [column('ID'), column('NAME'), column('ACCOUNT', 'account_id')];
const KEY_COLUMNS = [
  column('ID'),
  column('NAME'),
  column('PREFIX'),
  column('SCOPE'),
  column('ACCOUNT', 'account_id'),
  column('CREATED', 'created_at'),
  column('REVOKED', 'revoked_at'),
];
const EVENT_TYPE_COLUMNS = [column('NAME'), column('DESCRIPTION'), column('ENFORCED', 'enforce')];

/**
 * The operator's commands on accounts, applications, API keys and event types. They call the
 * admin API of a running Herald like any other client: `herald accounts create --name Acme`.
 */
export function registerAdminCommands(program: Command, connect: (options: ApiOptions) => HeraldApi): void {
  const accounts = program.command('accounts').description('list, read and create accounts');
  paged(apiCommand(accounts, { nameAndArgs: 'list', description: 'list accounts, newest first' })).action(
    async (options: ApiOptions & PageOptions) => {
      const answer = await connect(options).call((herald) => herald.GET('/admin/accounts', { params: { query: pageQuery(options) } }));
      printList(answer, ACCOUNT_COLUMNS, { json: !!options.json, noun: 'accounts' });
    },
  );
  apiCommand(accounts, { nameAndArgs: 'get <account-id>', description: 'read one account' }).action(
    async (id: string, options: ApiOptions) => {
      const answer = await connect(options).call((herald) => herald.GET('/admin/accounts/{id}', { params: { path: { id } } }));
      printItem(answer, { json: !!options.json });
    },
  );
  apiCommand(accounts, { nameAndArgs: 'create', description: 'create an account' })
    .requiredOption('--name <name>', "the account's name")
    .action(async (options: ApiOptions & { name: string }) => {
      const answer = await connect(options).call((herald) => herald.POST('/admin/accounts', { body: { name: options.name } }));
      printItem(answer, { json: !!options.json });
    });

  const applications = program.command('applications').description('list, read and create applications');
  paged(
    apiCommand(applications, { nameAndArgs: 'list', description: 'list applications by id' }).option(
      '--account <account-id>',
      "only this account's",
    ),
  ).action(async (options: ApiOptions & PageOptions & { account?: string }) => {
    const query = { account_id: options.account, ...pageQuery(options) };
    const answer = await connect(options).call((herald) => herald.GET('/admin/applications', { params: { query } }));
    printList(answer, APPLICATION_COLUMNS, { json: !!options.json, noun: 'applications' });
  });
  apiCommand(applications, { nameAndArgs: 'get <application-id>', description: 'read one application' }).action(
    async (id: string, options: ApiOptions) => {
      const answer = await connect(options).call((herald) =>
        herald.GET('/admin/applications/{id}', { params: { path: { id: operatorsValue<number>(id) } } }),
      );
      printItem(answer, { json: !!options.json });
    },
  );
  apiCommand(applications, { nameAndArgs: 'create', description: 'create an application of an account' })
    .requiredOption('--account <account-id>', 'the account that owns it')
    .requiredOption('--name <name>', "the application's name")
    .option('--id <n>', "the platform's own application id (default: the next free one)", positiveInteger)
    .action(async (options: ApiOptions & { account: string; name: string; id?: number }) => {
      const body = { id: options.id, name: options.name, account_id: options.account };
      printItem(await connect(options).call((herald) => herald.POST('/admin/applications', { body })), { json: !!options.json });
    });

  const keys = program.command('keys').alias('api-keys').description('list, read, create and revoke API keys');
  paged(
    apiCommand(keys, {
      nameAndArgs: 'list',
      description: 'list API keys, newest first: prefix, name, scope and dates, never the key',
    }).option('--account <account-id>', "only this account's"),
  ).action(async (options: ApiOptions & PageOptions & { account?: string }) => {
    const query = { account_id: options.account, ...pageQuery(options) };
    const answer = await connect(options).call((herald) => herald.GET('/admin/api_keys', { params: { query } }));
    printList(answer, KEY_COLUMNS, { json: !!options.json, noun: 'API keys' });
  });
  apiCommand(keys, { nameAndArgs: 'get <key-id>', description: 'read one API key (never the key itself)' }).action(
    async (id: string, options: ApiOptions) => {
      const answer = await connect(options).call((herald) => herald.GET('/admin/api_keys/{id}', { params: { path: { id } } }));
      printItem(answer, { json: !!options.json });
    },
  );
  apiCommand(keys, { nameAndArgs: 'create', description: 'create an API key for an account; the key is shown only this once' })
    .requiredOption('--account <account-id>', 'the account it acts for')
    .requiredOption('--name <name>', 'what it is for, to recognise it later')
    .action(async (options: ApiOptions & { account: string; name: string }) => {
      const body = { account_id: options.account, name: options.name };
      printItem(await connect(options).call((herald) => herald.POST('/admin/api_keys', { body })), { json: !!options.json });
      if (!options.json) process.stderr.write('herald: the key is shown only now: Herald keeps only its hash\n');
    });
  apiCommand(keys, { nameAndArgs: 'revoke <key-id>', description: 'revoke an API key; every api process refuses it at once' }).action(
    async (id: string, options: ApiOptions) => {
      const answer = await connect(options).call((herald) => herald.DELETE('/admin/api_keys/{id}', { params: { path: { id } } }));
      printItem(answer, { json: !!options.json });
    },
  );

  const eventTypes = program.command('event-types').description('list, read, add and change event types and their payload schemas');
  paged(apiCommand(eventTypes, { nameAndArgs: 'list', description: 'list the event types applications can subscribe to' })).action(
    async (options: ApiOptions & PageOptions) => {
      const answer = await connect(options).call((herald) => herald.GET('/event_types', { params: { query: pageQuery(options) } }));
      printList(answer, EVENT_TYPE_COLUMNS, { json: !!options.json, noun: 'event types' });
    },
  );
  apiCommand(eventTypes, {
    nameAndArgs: 'get <name>',
    description: 'read one event type: description, schema, enforcement, example',
  }).action(async (name: string, options: ApiOptions) => {
    printItem(await connect(options).call((herald) => herald.GET('/event_types/{name}', { params: { path: { name } } })), {
      json: !!options.json,
    });
  });
  schemaOptions(
    apiCommand(eventTypes, { nameAndArgs: 'create', description: 'add an event type to the catalogue' })
      .requiredOption('--name <name>', 'the event name, [a-z0-9_.]{1,64}')
      .option('--description <text>', 'what the event means'),
  ).action(async (options: ApiOptions & SchemaOptions & { name: string; description?: string }) => {
    const body = { name: options.name, description: options.description, ...schemaFields(options) };
    printItem(await connect(options).call((herald) => herald.POST('/admin/event_types', { body })), { json: !!options.json });
  });
  schemaOptions(
    apiCommand(eventTypes, {
      nameAndArgs: 'update <name>',
      description: 'change an event type: what is not given stays as it is; every api process applies it within a second',
    }).option('--description <text>', 'what the event means'),
  ).action(async (name: string, options: ApiOptions & SchemaOptions & { description?: string }) => {
    const body = { description: options.description, ...schemaFields(options) };
    printItem(await connect(options).call((herald) => herald.PUT('/admin/event_types/{name}', { params: { path: { name } }, body })), {
      json: !!options.json,
    });
  });
}

/** `--schema file.json`, `--no-schema` (remove it), `--enforce`/`--no-enforce`, `--example file.json`, `--no-example`. */
interface SchemaOptions {
  schema?: Record<string, unknown> | false;
  enforce?: boolean;
  example?: Record<string, unknown> | false;
}

function schemaOptions(command: Command): Command {
  return command
    .option('--schema <file>', 'a JSON Schema (draft 2020-12) of the payload, read from a file (at most 64 KiB)', jsonObjectFile)
    .option('--no-schema', 'remove the schema (and so its enforcement)')
    .option('--enforce', 'refuse payloads that do not match the schema (400-08)')
    .option('--no-enforce', 'let every payload through: the schema only documents')
    .option('--example <file>', 'an example payload, read from a file; it must satisfy the schema', jsonObjectFile)
    .option('--no-example', 'remove the example');
}

/** What the options say, as the api's fields: left out when not given, null to remove. */
function schemaFields(options: SchemaOptions): {
  schema?: Record<string, unknown> | null;
  enforce?: boolean;
  example?: Record<string, unknown> | null;
} {
  return {
    schema: options.schema === false ? null : options.schema,
    enforce: options.enforce,
    example: options.example === false ? null : options.example,
  };
}
