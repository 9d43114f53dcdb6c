import type { Schemas } from '@herald/client';
import { Command } from 'commander';
import { Answer, HeraldApi } from '../api/herald-api';
import { column, printList } from '../output/print';
import { apiCommand, ApiOptions, operatorsValue, PageOptions, paged, pageQuery } from './api-command';

const AUDIT_COLUMNS = [
  column('ID'),
  column('AT'),
  column('ACTION'),
  column('ACTOR'),
  column('ACCOUNT', 'account_id'),
  column('APPLICATION', 'application_id'),
  column('CHANGED'),
];

/** An action as the operator typed it: the api, not the cli, judges it. */
const action = (options: AuditOptions) =>
  options.action === undefined ? undefined : operatorsValue<Schemas['AuditRecordDto']['action']>(options.action);

type AuditOptions = ApiOptions & PageOptions & { application?: string; account?: string; action?: string };

interface AuditRecord {
  actor: { type: string; id: string; prefix?: string | null };
  changes: Record<string, unknown>;
}

/**
 * The table's view of audit records (PRODUCT.md §16): who acted, as `<type> <prefix or id>`, and
 * which fields changed; --json keeps the records whole.
 */
function readable(answer: Answer, json: boolean): Answer {
  if (json || !Array.isArray(answer.data)) return answer;
  const data = (answer.data as (AuditRecord & Record<string, unknown>)[]).map((record) => ({
    ...record,
    actor: `${record.actor.type} ${record.actor.prefix ?? record.actor.id}`,
    changed: Object.keys(record.changes).join(', '),
  }));
  return { ...answer, data };
}

/**
 * `herald audit list`: the audit log, newest first. With --application alone, that application's
 * log (its account's key may read it); otherwise the whole log, filtered (the admin key).
 */
export function registerAuditCommands(program: Command, connect: (options: ApiOptions) => HeraldApi): void {
  const audit = program.command('audit').description('read the audit log: who changed what, when');
  paged(
    apiCommand(audit, {
      nameAndArgs: 'list',
      description: "list audit records, newest first: one application's (--application), or every one (admin key)",
      keyHelp: "the admin key, or with --application alone an API key of the application's account (default $HERALD_ADMIN_KEY)",
    })
      .option('--application <application-id>', 'only this application’s records')
      .option('--account <account-id>', 'only this account’s records (admin key)')
      .option('--action <action>', 'only records of this action, e.g. webhook.updated'),
  ).action(async (options: AuditOptions) => {
    const json = !!options.json;
    const answer =
      options.application !== undefined && options.account === undefined
        ? await connect(options).call((herald) =>
            herald.GET('/application/{application_id}/audit', {
              params: {
                path: { application_id: operatorsValue<number>(options.application!) },
                query: { action: action(options), ...pageQuery(options) },
              },
            }),
          )
        : await connect(options).call((herald) =>
            herald.GET('/admin/audit', {
              params: {
                query: {
                  account_id: options.account,
                  application_id: options.application === undefined ? undefined : operatorsValue<number>(options.application),
                  action: action(options),
                  ...pageQuery(options),
                },
              },
            }),
          );
    printList(readable(answer, json), AUDIT_COLUMNS, { json, noun: 'audit records' });
  });
}
