import { Command } from 'commander';
import { HeraldApi } from '../api/herald-api';
import { printItem } from '../output/print';
import { ApiOptions, positiveInteger } from './api-command';
import { application, applicationCommand, ApplicationOptions } from './deliveries';
import { UsageError } from '../cli-errors';
import { jsonObjectInlineOrFile } from './json-arguments';

const FILTER_ARGUMENT = 'a JSON object written here, or a file holding one';

/** A subscription's payload filter (PRODUCT.md §14): read, set, try on the latest events, remove. */
export function registerSubscriptionCommands(program: Command, connect: (options: ApiOptions) => HeraldApi): void {
  const subscriptions = program.command('subscriptions').description("an application's subscriptions: their payload filters");
  const filter = subscriptions
    .command('filter')
    .description(
      'which events of a subscription are delivered: MongoDB query operators on the payload ' +
        '($eq $ne $in $nin $gt $gte $lt $lte $exists, $and $or $not)',
    );
  const path = (event: string, options: ApplicationOptions) => ({ ...application(options), subscription: event });

  applicationCommand(filter, { nameAndArgs: 'get <event>', description: "read the subscription's filter (null: every event)" }).action(
    async (event: string, options: ApplicationOptions) => {
      const answer = await connect(options).call((herald) =>
        herald.GET('/application/{application_id}/webhook/subscription/{subscription}/filter', { params: { path: path(event, options) } }),
      );
      printItem(answer, { json: !!options.json });
    },
  );
  applicationCommand(filter, {
    nameAndArgs: 'set <event> <filter>',
    description: `set the filter (${FILTER_ARGUMENT}); every api process applies it within a second`,
  }).action(async (event: string, text: string, options: ApplicationOptions) => {
    const body = { filter: filterArgument(text) };
    const answer = await connect(options).call((herald) =>
      herald.PUT('/application/{application_id}/webhook/subscription/{subscription}/filter', {
        params: { path: path(event, options) },
        body,
      }),
    );
    printItem(answer, { json: !!options.json });
  });
  applicationCommand(filter, {
    nameAndArgs: 'test <event> [filter]',
    description: `try a filter (${FILTER_ARGUMENT}; default the stored one) on the latest events of the type, storing nothing`,
  })
    .option('--limit <n>', 'how many of the latest events to try (1 to 1000, default 100)', positiveInteger)
    .action(async (event: string, text: string | undefined, options: ApplicationOptions & { limit?: number }) => {
      const body = { filter: text === undefined ? undefined : filterArgument(text), limit: options.limit };
      const answer = await connect(options).call((herald) =>
        herald.POST('/application/{application_id}/webhook/subscription/{subscription}/filter/test', {
          params: { path: path(event, options) },
          body,
        }),
      );
      printItem(answer, { json: !!options.json });
    });
  applicationCommand(filter, {
    nameAndArgs: 'remove <event>',
    description: 'remove the filter: every event of the type is delivered again',
  }).action(async (event: string, options: ApplicationOptions) => {
    const answer = await connect(options).call((herald) =>
      herald.DELETE('/application/{application_id}/webhook/subscription/{subscription}/filter', { params: { path: path(event, options) } }),
    );
    printItem(answer, { json: !!options.json });
  });
}

/** The <filter> argument read before anything is sent: text that is not a JSON object is a usage error (exit 2). */
function filterArgument(text: string): Record<string, unknown> {
  try {
    return jsonObjectInlineOrFile(text);
  } catch (error) {
    throw new UsageError(`<filter>: ${(error as Error).message}`);
  }
}
