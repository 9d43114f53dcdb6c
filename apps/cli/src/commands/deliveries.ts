import { DELIVERY_STATUSES, DeliveryStatus } from '@herald/core';
import { Command, Option } from 'commander';
import { HeraldApi } from '../api/herald-api';
import { column, printItem, printList } from '../output/print';
import { UsageError } from '../cli-errors';
import { apiCommand, ApiCommandSpec, ApiOptions, operatorsValue, PageOptions, paged, pageQuery } from './api-command';
import { jsonObject, jsonObjectFile } from './json-arguments';

const DELIVERY_COLUMNS = [
  column('ID'),
  column('EVENT'),
  column('STATUS'),
  column('ATTEMPTS', 'attempt_count'),
  column('CREATED', 'created_at'),
  column('NEXT ATTEMPT', 'next_attempt_at'),
];
const ATTEMPT_COLUMNS = [
  column('#', 'number'),
  column('STARTED', 'started_at'),
  column('MS', 'duration_ms'),
  column('STATUS', 'response_status'),
  column('ERROR', 'error'),
  column('NEXT ATTEMPT', 'next_attempt_at'),
  column('URL', 'url'),
];

const EVENT_COLUMNS = [
  column('ID'),
  column('EVENT'),
  column('CREATED', 'created_at'),
  column('IDEMPOTENCY KEY', 'idempotency_key'),
  column('ORDERING KEY', 'ordering_key'),
  column('DELIVERIES', 'deliveries'),
];

const APPLICATION_KEY_HELP = "an admin key, or an API key of the application's account (default $HERALD_ADMIN_KEY)";

export type ApplicationOptions = ApiOptions & { application: string };

/** A command on one application's routes: it needs --application, and takes the account's key too. */
export function applicationCommand(parent: Command, spec: ApiCommandSpec): Command {
  return apiCommand(parent, { keyHelp: APPLICATION_KEY_HELP, ...spec }).requiredOption('--application <application-id>', 'the application');
}

/** The path parameter every application route takes: --application, as the operator typed it. */
export const application = (options: ApplicationOptions) => ({ application_id: operatorsValue<number>(options.application) });

/** The operator's view of one application: its webhook and its health, its events, its delivery log, retries and recovery. */
export function registerDeliveryCommands(program: Command, connect: (options: ApiOptions) => HeraldApi): void {
  const webhook = program.command('webhook').description("read an application's webhook and its health; disable or enable it");
  applicationCommand(webhook, { nameAndArgs: 'get', description: 'read the webhook: URL, retry policy and headers' }).action(
    async (options: ApplicationOptions) => {
      const path = application(options);
      printItem(await connect(options).call((herald) => herald.GET('/application/{application_id}/webhook', { params: { path } })), {
        json: !!options.json,
      });
    },
  );
  applicationCommand(webhook, {
    nameAndArgs: 'status',
    description: 'read its health: active or disabled (why, since when), the failure streak, the last success',
  }).action(async (options: ApplicationOptions) => {
    const path = application(options);
    const answer = await connect(options).call((herald) =>
      herald.GET('/application/{application_id}/webhook/status', { params: { path } }),
    );
    printItem(answer, { json: !!options.json });
  });
  applicationCommand(webhook, {
    nameAndArgs: 'disable',
    description: 'stop sending: deliveries are paused (kept) until it is enabled',
  }).action(async (options: ApplicationOptions) => {
    const path = application(options);
    const answer = await connect(options).call((herald) =>
      herald.POST('/application/{application_id}/webhook/disable', { params: { path } }),
    );
    printItem(answer, { json: !!options.json });
  });
  applicationCommand(webhook, { nameAndArgs: 'enable', description: 'send again: paused deliveries resume, oldest first' }).action(
    async (options: ApplicationOptions) => {
      const path = application(options);
      const answer = await connect(options).call((herald) =>
        herald.POST('/application/{application_id}/webhook/enable', { params: { path } }),
      );
      printItem(answer, { json: !!options.json });
    },
  );

  const events = program.command('events').description("an application's events: publish, list, read (with the payload), replay");
  paged(
    applicationCommand(events, { nameAndArgs: 'list', description: 'list events, newest first, with their deliveries' }).option(
      '--event <name>',
      'only events of this type',
    ),
  ).action(async (options: ApplicationOptions & PageOptions & { event?: string }) => {
    const params = { path: application(options), query: { event: options.event, ...pageQuery(options) } };
    const answer = await connect(options).call((herald) => herald.GET('/application/{application_id}/events', { params }));
    printList(answer, EVENT_COLUMNS, { json: !!options.json, noun: 'events' });
  });
  applicationCommand(events, {
    nameAndArgs: 'publish <event-type>',
    description: 'publish an event; events with the same --ordering-key are delivered one at a time, in order (PRODUCT.md §13)',
  })
    .option('--payload <json>', 'the payload: a JSON object (default {})', (text: string) => jsonObject(text, '--payload'))
    .option('--payload-file <file>', 'the payload, read from a file holding a JSON object', jsonObjectFile)
    .option('--idempotency-key <key>', 'publish at most once under this key (24 hours)')
    .option('--ordering-key <key>', 'deliver after the earlier events with this key, and before the later ones')
    .action(
      async (
        eventType: string,
        options: ApplicationOptions & {
          payload?: Record<string, unknown>;
          payloadFile?: Record<string, unknown>;
          idempotencyKey?: string;
          orderingKey?: string;
        },
      ) => {
        if (options.payload && options.payloadFile) throw new UsageError('give --payload or --payload-file, not both');
        const body = {
          event: eventType,
          payload: options.payload ?? options.payloadFile ?? {},
          idempotency_key: options.idempotencyKey,
          ordering_key: options.orderingKey,
        };
        const answer = await connect(options).call((herald) =>
          herald.POST('/application/{application_id}/events', { params: { path: application(options) }, body }),
        );
        printItem(answer, { json: !!options.json });
      },
    );
  applicationCommand(events, { nameAndArgs: 'get <event-id>', description: 'read an event with its payload as stored' }).action(
    async (id: string, options: ApplicationOptions) => {
      const path = { ...application(options), event_id: id };
      const answer = await connect(options).call((herald) =>
        herald.GET('/application/{application_id}/events/{event_id}', { params: { path } }),
      );
      printItem(answer, { json: !!options.json });
    },
  );
  applicationCommand(events, {
    nameAndArgs: 'replay <event-id>',
    description: "deliver the event again, under today's webhook and subscription",
  }).action(async (id: string, options: ApplicationOptions) => {
    const path = { ...application(options), event_id: id };
    const answer = await connect(options).call((herald) =>
      herald.POST('/application/{application_id}/events/{event_id}/replay', { params: { path } }),
    );
    printItem(answer, { json: !!options.json });
  });

  const deliveries = program.command('deliveries').description("an application's delivery log: list, read, retry, recover");
  paged(
    applicationCommand(deliveries, { nameAndArgs: 'list', description: 'list deliveries, newest first' })
      .addOption(new Option('--status <status>', 'only deliveries in this state').choices(DELIVERY_STATUSES))
      .option('--event <name>', 'only deliveries of this event type'),
  ).action(async (options: ApplicationOptions & PageOptions & { status?: DeliveryStatus; event?: string }) => {
    const params = { path: application(options), query: { status: options.status, event: options.event, ...pageQuery(options) } };
    const answer = await connect(options).call((herald) => herald.GET('/application/{application_id}/deliveries', { params }));
    printList(answer, DELIVERY_COLUMNS, { json: !!options.json, noun: 'deliveries' });
  });
  applicationCommand(deliveries, { nameAndArgs: 'get <delivery-id>', description: 'read a delivery with every attempt' }).action(
    async (id: string, options: ApplicationOptions) => {
      const path = { ...application(options), delivery_id: id };
      const answer = await connect(options).call((herald) =>
        herald.GET('/application/{application_id}/deliveries/{delivery_id}', { params: { path } }),
      );
      printItem(answer, { json: !!options.json, tables: { attempts: ATTEMPT_COLUMNS } });
    },
  );
  applicationCommand(deliveries, {
    nameAndArgs: 'retry <delivery-id>',
    description: 'give a finished delivery one more attempt now, or bring a pending one forward',
  }).action(async (id: string, options: ApplicationOptions) => {
    const path = { ...application(options), delivery_id: id };
    const answer = await connect(options).call((herald) =>
      herald.POST('/application/{application_id}/deliveries/{delivery_id}/retry', { params: { path } }),
    );
    printItem(answer, { json: !!options.json });
  });
  applicationCommand(deliveries, {
    nameAndArgs: 'recover',
    description: 'give every failed delivery created in [--since, --until) one new attempt now',
  })
    .requiredOption('--since <time>', 'ISO-8601, e.g. 2026-11-23T09:00:00Z: deliveries created at or after it')
    .option('--until <time>', 'ISO-8601: deliveries created before it (default: now)')
    .option('--event <name>', 'only deliveries of this event type')
    .action(async (options: ApplicationOptions & { since: string; until?: string; event?: string }) => {
      const body = { since: options.since, until: options.until, event: options.event };
      const path = application(options);
      const answer = await connect(options).call((herald) =>
        herald.POST('/application/{application_id}/deliveries/recover', { params: { path }, body }),
      );
      printItem(answer, { json: !!options.json });
    });
}
