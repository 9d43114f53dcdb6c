import type { ApiClientConfig } from '@herald/core';
import { Command, InvalidArgumentError, Option } from 'commander';
import { HeraldApi } from '../api/herald-api';
import { EXIT_CODES_HELP, UsageError } from '../cli-errors';

/** What the api commands need from the environment (core's parseApiClientConfig). */
export type ApiDefaults = ApiClientConfig;

/** The help heading of --url, --key and --json: listed after each command's own options. */
export const API_OPTIONS_HEADING = 'Calling the api:';

/** The options every command that calls the api takes. */
export interface ApiOptions {
  url?: string;
  key?: string;
  json?: boolean;
}

export interface ApiCommandSpec {
  /** `list`, `get <id>`, … */
  nameAndArgs: string;
  description: string;
  /** What --key may be: admin routes need an admin key; application routes also take the account's key. */
  keyHelp?: string;
}

/**
 * A subcommand of `parent` that calls the running api: it takes --url, --key and --json, and
 * its help ends with the exit codes.
 */
export function apiCommand(parent: Command, spec: ApiCommandSpec): Command {
  const common = (flags: string, description: string) => new Option(flags, description).helpGroup(API_OPTIONS_HEADING);
  return parent
    .command(spec.nameAndArgs)
    .description(spec.description)
    .addOption(common('--url <url>', 'the api to call (default http://127.0.0.1:$PORT)'))
    .addOption(common('--key <key>', spec.keyHelp ?? 'an admin API key (default $HERALD_ADMIN_KEY)'))
    .addOption(common('--json', "print the api's answer as JSON on stdout, and nothing else there"))
    .addHelpText('after', `\n${EXIT_CODES_HELP}`);
}

/** The api at --url (or 127.0.0.1:$PORT) with --key (or $HERALD_ADMIN_KEY). */
export function connect(options: ApiOptions, defaults: () => ApiDefaults): HeraldApi {
  const fallback = options.url === undefined || options.key === undefined ? defaults() : null;
  const key = options.key ?? fallback?.adminKey;
  if (!key) throw new UsageError('no API key: give --key or set HERALD_ADMIN_KEY');
  return new HeraldApi(options.url ?? `http://127.0.0.1:${fallback?.port}`, key);
}

/** --limit and --cursor for a paged list. */
export function paged(command: Command): Command {
  return command
    .option('--limit <n>', 'at most this many (the api allows 1 to 100)', positiveInteger)
    .option('--cursor <cursor>', 'the next page: the cursor the previous page gave');
}

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

/** The query of a paged list route; openapi-fetch leaves out what is undefined. */
export function pageQuery(options: PageOptions): { limit?: number; cursor?: string } {
  return { limit: options.limit, cursor: options.cursor };
}

/** A whole number written plainly (`42`, not `4.2e1`): the cli turns it into JSON, so it checks the form; the api the range. */
export function positiveInteger(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw new InvalidArgumentError('expected a positive integer.');
  return Number(raw);
}

/**
 * A value the operator typed for a parameter the api types otherwise (an application id is a
 * number), sent as typed: the api, not the cli, judges it, so `--application abc` gets the api's
 * own code and message, as from any other client. openapi-fetch encodes it as one path segment.
 */
export function operatorsValue<T extends number | string>(raw: string): T {
  return raw as unknown as T;
}
