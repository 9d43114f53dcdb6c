import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm, type UseFormRegisterReturn } from 'react-hook-form';
import { api, call, type Schemas } from '../api/client';
import { APPLICATIONS_QUERY_KEY, ApplicationList } from '../components/ApplicationList';
import { ErrorMessage } from '../components/ErrorMessage';

/** Admin keys: every account and application, and the account keys. */
export function AdminHome() {
  const accounts = useQuery({
    queryKey: ['accounts'],
    queryFn: () => call(api.GET('/admin/accounts', { params: { query: { limit: 100 } } })),
  });
  return (
    <div className="stack">
      <h1>Applications</h1>
      <ApplicationSection accounts={accounts.data?.data ?? []} />
      <div className="columns">
        <AccountSection accounts={accounts.data?.data ?? []} error={accounts.error} />
        <KeySection accounts={accounts.data?.data ?? []} />
      </div>
    </div>
  );
}

function ApplicationSection({ accounts }: { accounts: Schemas['AccountDto'][] }) {
  const queryClient = useQueryClient();
  const form = useForm<{ id: string; name: string; account_id: string }>({ defaultValues: { id: '', name: '', account_id: '' } });
  const create = useMutation({
    mutationFn: (v: { id: string; name: string; account_id: string }) =>
      call(api.POST('/admin/applications', { body: { name: v.name, account_id: v.account_id, ...(v.id ? { id: Number(v.id) } : {}) } })),
    onSuccess: () => {
      form.reset();
      void queryClient.invalidateQueries({ queryKey: APPLICATIONS_QUERY_KEY });
    },
  });
  const names = new Map(accounts.map((a) => [a.id, a.name]));
  return (
    <section className="card" aria-labelledby="apps-heading">
      <h2 id="apps-heading">All applications</h2>
      <ApplicationList accountNames={names} empty="No applications yet." />
      <form className="inline-form" onSubmit={form.handleSubmit((v) => create.mutate(v))}>
        <h3>New application</h3>
        <div className="field">
          <label htmlFor="new-app-id">Id (optional)</label>
          <input id="new-app-id" inputMode="numeric" {...form.register('id')} />
        </div>
        <div className="field">
          <label htmlFor="new-app-name">Application name</label>
          <input id="new-app-name" {...form.register('name', { required: true })} />
        </div>
        <AccountSelect id="new-app-account" label="Account" accounts={accounts} field={form.register('account_id', { required: true })} />
        <button type="submit" className="button">
          Create application
        </button>
        <ErrorMessage error={create.error} />
      </form>
    </section>
  );
}

function AccountSection({ accounts, error }: { accounts: Schemas['AccountDto'][]; error: unknown }) {
  const queryClient = useQueryClient();
  const form = useForm<{ name: string }>({ defaultValues: { name: '' } });
  const create = useMutation({
    mutationFn: (name: string) => call(api.POST('/admin/accounts', { body: { name } })),
    onSuccess: () => {
      form.reset();
      void queryClient.invalidateQueries({ queryKey: ['accounts'] });
    },
  });
  return (
    <section className="card" aria-labelledby="accounts-heading">
      <h2 id="accounts-heading">Accounts</h2>
      <ErrorMessage error={error} />
      <ul className="plain-list">
        {accounts.map((a) => (
          <li key={a.id}>
            {a.name} <code className="muted">{a.id}</code>
          </li>
        ))}
      </ul>
      <form className="inline-form" onSubmit={form.handleSubmit((v) => create.mutate(v.name))}>
        <div className="field">
          <label htmlFor="new-account">Account name</label>
          <input id="new-account" {...form.register('name', { required: true })} />
        </div>
        <button type="submit" className="button">
          Create account
        </button>
        <ErrorMessage error={create.error} />
      </form>
    </section>
  );
}

function KeySection({ accounts }: { accounts: Schemas['AccountDto'][] }) {
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<Schemas['CreatedApiKeyDto'] | null>(null);
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => call(api.GET('/admin/api_keys', { params: { query: { limit: 100 } } })) });
  const form = useForm<{ name: string; account_id: string }>({ defaultValues: { name: '', account_id: '' } });
  const create = useMutation({
    mutationFn: (v: { name: string; account_id: string }) => call(api.POST('/admin/api_keys', { body: v })),
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
  return (
    <section className="card" aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <ErrorMessage error={keys.error ?? revoke.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scope</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.data?.data.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}</code>
              </td>
              <td>{key.revoked_at ? 'revoked' : key.scope}</td>
              <td>
                {!key.revoked_at && key.account_id && (
                  <button type="button" className="button subtle danger" onClick={() => revoke.mutate(key.id)}>
                    Revoke<span className="visually-hidden"> key {key.name}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {created && (
        <div className="notice" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is not shown again.
          </p>
          <code className="secret">{created.key}</code>
          <button type="button" className="button subtle" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <form className="inline-form" onSubmit={form.handleSubmit((v) => create.mutate(v))}>
        <div className="field">
          <label htmlFor="new-key-name">Key name</label>
          <input id="new-key-name" {...form.register('name', { required: true })} />
        </div>
        <AccountSelect
          id="new-key-account"
          label="Key account"
          accounts={accounts}
          field={form.register('account_id', { required: true })}
        />
        <button type="submit" className="button">
          Create key
        </button>
        <ErrorMessage error={create.error} />
      </form>
    </section>
  );
}

/** The account a new application or key belongs to, chosen by name. */
function AccountSelect({
  id,
  label,
  accounts,
  field,
}: {
  id: string;
  label: string;
  accounts: Schemas['AccountDto'][];
  field: UseFormRegisterReturn;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...field}>
        <option value="">Choose…</option>
        {accounts.map((a) => (
          <option key={a.id} value={a.id}>
            {a.name}
          </option>
        ))}
      </select>
    </div>
  );
}
