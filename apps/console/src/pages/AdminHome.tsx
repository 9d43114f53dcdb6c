import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm, type FieldError, type UseFormRegisterReturn } from 'react-hook-form';
import type { Schemas } from '@herald/client';
import { api, call } from '../api/client';
import { APPLICATIONS_QUERY_KEY, ApplicationList } from '../components/ApplicationList';
import { ConfirmButton, confirmMutation } from '../components/ConfirmButton';
import { CopyButton } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { MoreButton } from '../components/MoreButton';
import { Time } from '../components/Time';

/** The admin listings' page size (the API's maximum); "More …" asks for the next page. */
const PAGE = 100;

/** Admin keys: every account and application, and the account keys. */
export function AdminHome() {
  const accounts = useInfiniteQuery({
    queryKey: ['accounts'],
    queryFn: ({ pageParam }) =>
      call(api.GET('/admin/accounts', { params: { query: { limit: PAGE, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const list = accounts.data?.pages.flatMap((p) => p.data) ?? [];
  const names = new Map(list.map((a) => [a.id, a.name]));
  return (
    <div className="stack">
      <h1>Applications</h1>
      <ApplicationSection accounts={list} names={names} />
      <div className="columns admin-columns">
        <section className="card" aria-labelledby="accounts-heading">
          <h2 id="accounts-heading">Accounts</h2>
          <ErrorMessage error={accounts.error} />
          <ul className="plain-list">
            {list.map((a) => (
              <li key={a.id}>
                <span>{a.name}</span> <code className="muted id-hint">{a.id}</code>
              </li>
            ))}
          </ul>
          <MoreButton pages={accounts}>More accounts</MoreButton>
          <NewAccount />
        </section>
        <KeySection accounts={list} names={names} />
      </div>
    </div>
  );
}

function ApplicationSection({ accounts, names }: { accounts: Schemas['AccountDto'][]; names: ReadonlyMap<string, string> }) {
  const queryClient = useQueryClient();
  const form = useForm<{ id: string; name: string; account_id: string }>({ defaultValues: { id: '', name: '', account_id: '' } });
  const create = useMutation({
    mutationFn: (v: { id: string; name: string; account_id: string }) =>
      call(
        api.POST('/admin/applications', { body: { name: v.name.trim(), account_id: v.account_id, ...(v.id ? { id: Number(v.id) } : {}) } }),
      ),
    onSuccess: () => {
      form.reset();
      void queryClient.invalidateQueries({ queryKey: APPLICATIONS_QUERY_KEY });
    },
  });
  const errors = form.formState.errors;
  return (
    <section className="card" aria-labelledby="apps-heading">
      <h2 id="apps-heading">All applications</h2>
      <ApplicationList accountNames={names} empty="No applications yet." />
      <form className="inline-form" noValidate onSubmit={form.handleSubmit((v) => create.mutate(v))}>
        <h3>New application</h3>
        <div className="field">
          <label htmlFor="new-app-id">Id (optional)</label>
          <input
            id="new-app-id"
            inputMode="numeric"
            aria-invalid={errors.id ? true : undefined}
            aria-describedby={errors.id ? 'new-app-id-error' : undefined}
            {...form.register('id', { pattern: { value: /^\d*$/, message: 'A whole number, or empty to pick the next free one.' } })}
          />
          <FieldMessage id="new-app-id-error" error={errors.id} />
        </div>
        <div className="field">
          <label htmlFor="new-app-name">Application name</label>
          <input
            id="new-app-name"
            aria-invalid={errors.name ? true : undefined}
            aria-describedby={errors.name ? 'new-app-name-error' : undefined}
            {...form.register('name', { validate: (v) => v.trim() !== '' || 'Give the application a name.' })}
          />
          <FieldMessage id="new-app-name-error" error={errors.name} />
        </div>
        <AccountSelect
          id="new-app-account"
          label="Account"
          accounts={accounts}
          error={errors.account_id}
          field={form.register('account_id', { required: 'Choose the account it belongs to.' })}
        />
        <button type="submit" className="button" disabled={create.isPending}>
          Create application
        </button>
        <ErrorMessage error={create.error} />
        {create.data && (
          <p className="ok" role="status">
            Application {create.data.data.id} “{create.data.data.name}” created.
          </p>
        )}
      </form>
    </section>
  );
}

function NewAccount() {
  const queryClient = useQueryClient();
  const form = useForm<{ name: string }>({ defaultValues: { name: '' } });
  const create = useMutation({
    mutationFn: (name: string) => call(api.POST('/admin/accounts', { body: { name: name.trim() } })),
    onSuccess: () => {
      form.reset();
      void queryClient.invalidateQueries({ queryKey: ['accounts'] });
    },
  });
  const error = form.formState.errors.name;
  return (
    <form className="inline-form" noValidate onSubmit={form.handleSubmit((v) => create.mutate(v.name))}>
      <div className="field">
        <label htmlFor="new-account">Account name</label>
        <input
          id="new-account"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'new-account-error' : undefined}
          {...form.register('name', { validate: (v) => v.trim() !== '' || 'Give the account a name.' })}
        />
        <FieldMessage id="new-account-error" error={error} />
      </div>
      <button type="submit" className="button" disabled={create.isPending}>
        Create account
      </button>
      <ErrorMessage error={create.error} />
    </form>
  );
}

function KeySection({ accounts, names }: { accounts: Schemas['AccountDto'][]; names: ReadonlyMap<string, string> }) {
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<Schemas['CreatedApiKeyDto'] | null>(null);
  const keys = useInfiniteQuery({
    queryKey: ['keys'],
    queryFn: ({ pageParam }) =>
      call(api.GET('/admin/api_keys', { params: { query: { limit: PAGE, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const form = useForm<{ name: string; account_id: string }>({ defaultValues: { name: '', account_id: '' } });
  const create = useMutation({
    mutationFn: (v: { name: string; account_id: string }) => call(api.POST('/admin/api_keys', { body: { ...v, name: v.name.trim() } })),
    onSuccess: (res) => {
      setCreated(res.data);
      form.reset();
      void queryClient.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/admin/api_keys/{id}', { params: { path: { id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['keys'] }),
  });
  const rows = keys.data?.pages.flatMap((p) => p.data) ?? [];
  const errors = form.formState.errors;
  return (
    <section className="card" aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <ErrorMessage error={keys.error} />
      {created && (
        <div className="notice" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is not shown again.
          </p>
          <p>
            <code className="secret" aria-label="New API key">
              {created.key}
            </code>
          </p>
          <div className="actions">
            <CopyButton value={created.key} what="new API key" size="regular" />
            <button type="button" className="button subtle" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <div className="table-scroll" tabIndex={0} role="region" aria-label="API key list">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Account</th>
              <th scope="col">Prefix</th>
              <th scope="col">State</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((key) => {
              const account = key.account_id ? (names.get(key.account_id) ?? key.account_id) : 'every account';
              return (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>{account}</td>
                  <td>
                    <code>{key.prefix}</code>
                  </td>
                  <td>
                    {key.revoked_at ? (
                      <>
                        revoked <Time iso={key.revoked_at} />
                      </>
                    ) : (
                      key.scope
                    )}
                  </td>
                  <td className="row-actions">
                    {!key.revoked_at && key.account_id && (
                      <ConfirmButton
                        className="button subtle danger small"
                        label={`key ${key.name} of ${account}`}
                        title={`Revoke the key ${key.name} of ${account}?`}
                        body={
                          <p>
                            Every request signed with it is refused from now on. This cannot be undone: a new key would have to be handed
                            out.
                          </p>
                        }
                        confirm="Revoke key"
                        {...confirmMutation(revoke, key.id)}
                      >
                        Revoke
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <MoreButton pages={keys}>More keys</MoreButton>
      <form className="inline-form" noValidate onSubmit={form.handleSubmit((v) => create.mutate(v))}>
        <div className="field">
          <label htmlFor="new-key-name">Key name</label>
          <input
            id="new-key-name"
            aria-invalid={errors.name ? true : undefined}
            aria-describedby={errors.name ? 'new-key-name-error' : undefined}
            {...form.register('name', { validate: (v) => v.trim() !== '' || 'Name the key, e.g. production.' })}
          />
          <FieldMessage id="new-key-name-error" error={errors.name} />
        </div>
        <AccountSelect
          id="new-key-account"
          label="Key account"
          accounts={accounts}
          error={errors.account_id}
          field={form.register('account_id', { required: 'Choose the account the key acts for.' })}
        />
        <button type="submit" className="button" disabled={create.isPending}>
          Create key
        </button>
        <ErrorMessage error={create.error} />
      </form>
    </section>
  );
}

function FieldMessage({ id, error }: { id: string; error: FieldError | undefined }) {
  if (!error?.message) return null;
  return (
    <p className="field-error" id={id}>
      {error.message}
    </p>
  );
}

/** The account a new application or key belongs to, chosen by name. */
function AccountSelect({
  id,
  label,
  accounts,
  field,
  error,
}: {
  id: string;
  label: string;
  accounts: Schemas['AccountDto'][];
  field: UseFormRegisterReturn;
  error: FieldError | undefined;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-error` : undefined} {...field}>
        <option value="">Choose…</option>
        {accounts.map((a) => (
          <option key={a.id} value={a.id}>
            {a.name}
          </option>
        ))}
      </select>
      <FieldMessage id={`${id}-error`} error={error} />
    </div>
  );
}
