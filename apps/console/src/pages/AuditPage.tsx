import { useInfiniteQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import { definedOnly } from '../api/queries';
import { ErrorMessage } from '../components/ErrorMessage';
import { MoreButton } from '../components/MoreButton';
import { Time } from '../components/Time';
import { ACTION_WORDS, actorWords, AUDIT_ACTIONS, changeValue, type AuditAction, type AuditRecord } from '../lib/audit';
import { useApplicationId } from './ApplicationLayout';

const PAGE = 25;

/**
 * An application's audit log (PRODUCT.md §16): who changed what, newest first, for the
 * application's account keys, the operator and the customer's portal alike.
 */
export function AuditPage() {
  const id = useApplicationId();
  const [params, setParams] = useSearchParams();
  const action = (params.get('action') || undefined) as AuditAction | undefined;
  const records = useInfiniteQuery({
    queryKey: ['audit', id, action ?? ''],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/application/{application_id}/audit', {
          params: { path: { application_id: id }, query: { limit: PAGE, ...definedOnly({ action, cursor: pageParam }) } },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  return (
    <section className="card" aria-labelledby="audit-heading">
      <div className="section-head">
        <h2 id="audit-heading">Audit log</h2>
        <ActionFilter value={action} onChange={(next) => setParams(next ? { action: next } : {}, { replace: true })} />
      </div>
      <p className="muted">
        Every change to this application's webhook, subscriptions, secret, endpoint and portal links, and every time its signing secret was
        read, newest first. Secrets, keys and header values are never shown.
      </p>
      <AuditRecords records={records} filtered={Boolean(action)} />
    </section>
  );
}

/** The whole log, for the operator: every account and application, and the operator's own settings. */
export function AdminAuditPage() {
  const [params, setParams] = useSearchParams();
  const filters = {
    action: (params.get('action') || undefined) as AuditAction | undefined,
    account_id: params.get('account_id') || undefined,
    application_id: params.get('application_id') || undefined,
  };
  const records = useInfiniteQuery({
    queryKey: ['audit', 'all', filters],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/admin/audit', {
          params: {
            query: {
              limit: PAGE,
              ...definedOnly({
                ...filters,
                application_id: filters.application_id === undefined ? undefined : Number(filters.application_id),
                cursor: pageParam,
              }),
            },
          },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    retry: false,
  });
  const set = (name: string, value: string | undefined) =>
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        if (value) next.set(name, value);
        else next.delete(name);
        return next;
      },
      { replace: true },
    );
  return (
    <div className="stack">
      <h1>Audit log</h1>
      <section className="card" aria-labelledby="all-audit-heading">
        <div className="section-head">
          <h2 id="all-audit-heading">Every change</h2>
          <ActionFilter value={filters.action} onChange={(next) => set('action', next)} />
        </div>
        <TargetFilter
          accountId={filters.account_id ?? ''}
          applicationId={filters.application_id ?? ''}
          onApply={(accountId, applicationId) => {
            set('account_id', accountId);
            set('application_id', applicationId);
          }}
        />
        <AuditRecords records={records} filtered={Object.values(filters).some(Boolean)} showTarget />
      </section>
    </div>
  );
}

function ActionFilter({ value, onChange }: { value: AuditAction | undefined; onChange: (action: AuditAction | undefined) => void }) {
  return (
    <div className="field inline-field action-filter">
      <label htmlFor="audit-action">Action</label>
      <select id="audit-action" value={value ?? ''} onChange={(e) => onChange((e.target.value || undefined) as AuditAction | undefined)}>
        <option value="">any action</option>
        {AUDIT_ACTIONS.map((action) => (
          <option key={action} value={action}>
            {ACTION_WORDS[action]}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Account and application filters, applied together (typing an id should not ask the api at every key). */
function TargetFilter(props: { accountId: string; applicationId: string; onApply: (accountId?: string, applicationId?: string) => void }) {
  const [accountId, setAccountId] = useState(props.accountId);
  const [applicationId, setApplicationId] = useState(props.applicationId);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    props.onApply(accountId.trim() || undefined, applicationId.trim() || undefined);
  };
  return (
    <form className="filters target-filter" onSubmit={apply} aria-label="Whose changes">
      <div className="field">
        <label htmlFor="audit-account">Account id</label>
        <input id="audit-account" placeholder="acc_…" value={accountId} onChange={(e) => setAccountId(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="audit-application">Application id</label>
        <input id="audit-application" inputMode="numeric" value={applicationId} onChange={(e) => setApplicationId(e.target.value)} />
      </div>
      <button type="submit" className="button subtle">
        Show changes
      </button>
    </form>
  );
}

interface RecordPages {
  data?: { pages: { data: AuditRecord[] }[] };
  error: Error | null;
  isPending: boolean;
  isSuccess: boolean;
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => Promise<unknown>;
}

function AuditRecords({ records, filtered, showTarget = false }: { records: RecordPages; filtered: boolean; showTarget?: boolean }) {
  const rows = records.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <>
      <ErrorMessage error={records.error} />
      {records.isPending && (
        <p className="loading" role="status">
          Loading the audit log…
        </p>
      )}
      {records.isSuccess && rows.length === 0 && (
        <p className="muted empty">{filtered ? 'No changes match these filters.' : 'Nothing has been changed yet.'}</p>
      )}
      {rows.length > 0 && (
        <div className="table-scroll" tabIndex={0} role="region" aria-label="Audit records">
          <table className="log audit">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                {showTarget && <th scope="col">Where</th>}
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((record) => {
                const actor = actorWords(record.actor);
                return (
                  <tr key={record.id}>
                    <td data-label="When">
                      <Time iso={record.at} />
                      {record.request_id && <span className="id-hint">{record.request_id}</span>}
                    </td>
                    <td data-label="Who">
                      {actor.who} <code className="id-hint">{actor.which}</code>
                    </td>
                    <td data-label="What">{ACTION_WORDS[record.action]}</td>
                    {showTarget && (
                      <td data-label="Where">
                        {record.application_id !== null ? (
                          <Link to={`/applications/${record.application_id}/audit`}>Application {record.application_id}</Link>
                        ) : record.account_id !== null ? (
                          'Account'
                        ) : (
                          <span className="muted">Herald</span>
                        )}
                        {record.account_id && <span className="id-hint">{record.account_id}</span>}
                      </td>
                    )}
                    <td data-label="Changes">
                      <Changes record={record} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <MoreButton pages={records}>More changes</MoreButton>
    </>
  );
}

/** Each field that changed: its name, the value before and after ("none" where it did not exist). */
function Changes({ record }: { record: AuditRecord }) {
  const fields = Object.entries(record.changes);
  if (fields.length === 0) {
    return <span className="muted">{record.action.endsWith('.secret_read') ? 'the secret was shown' : 'nothing changed'}</span>;
  }
  return (
    <dl className="changes">
      {fields.map(([field, [before, after]]) => (
        <div key={field}>
          <dt>{field}</dt>
          <dd>
            <Value value={before} /> <span aria-label="became">→</span> <Value value={after} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function Value({ value }: { value: unknown }) {
  const text = changeValue(value);
  const quiet = value === null || value === undefined || text === '[redacted]';
  return <span className={quiet ? 'muted change-value' : 'change-value'}>{text}</span>;
}
