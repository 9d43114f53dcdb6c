import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { HeraldApiError, type Schemas } from '@herald/client';
import { api, call } from '../api/client';
import { ConfirmButton, confirmMutation } from '../components/ConfirmButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { EventTypeCatalogue, EventTypeDetails } from '../components/EventTypeCatalogue';
import { FilterEditor, filterQueryKey } from '../components/FilterEditor';
import { useApplicationId } from './ApplicationLayout';

type Flags = Schemas['SubscriptionFlagsDto'];

export function SubscriptionsPage() {
  const id = useApplicationId();
  const queryClient = useQueryClient();
  const [choice, setChoice] = useState('');
  /** The subscription whose filter is open for editing. */
  const [editing, setEditing] = useState<string | null>(null);
  // Bumped when a change is refused, so the toggles go back to the stored flags.
  const [refusals, setRefusals] = useState(0);
  const path = { params: { path: { application_id: id } } };
  const subscriptions = useQuery({
    queryKey: ['subscriptions', id],
    queryFn: () => call(api.GET('/application/{application_id}/webhook/subscription', path)),
  });
  const catalogue = useQuery({
    queryKey: ['event-types'],
    queryFn: () => call(api.GET('/event_types', { params: { query: { limit: 100 } } })),
  });
  const done = (res: Schemas['SubscriptionsResponse']) => queryClient.setQueryData(['subscriptions', id], res);
  const upsert = useMutation({
    mutationFn: ({ event, flags }: { event: string; flags: Partial<Flags> }) =>
      call(
        api.PUT('/application/{application_id}/webhook/subscription/{subscription}', {
          params: { path: { application_id: id, subscription: event } },
          body: flags,
        }),
      ),
    onSuccess: (res) => {
      done(res);
      setChoice('');
    },
    onError: () => setRefusals((n) => n + 1),
  });
  const remove = useMutation({
    mutationFn: (event: string) =>
      call(
        api.DELETE('/application/{application_id}/webhook/subscription/{subscription}', {
          params: { path: { application_id: id, subscription: event } },
        }),
      ),
    onSuccess: done,
  });
  if (subscriptions.error instanceof HeraldApiError && subscriptions.error.code === '404-02') {
    return (
      <p className="notice">
        Configure the webhook first: subscriptions belong to it. <Link to={`/applications/${id}/webhook`}>Configure the webhook</Link>
      </p>
    );
  }
  const current = Object.entries(subscriptions.data?.subscriptions ?? {});
  // Each subscription's filter, for the "Filter" column (the seed's map does not carry it).
  const filters = useQueries({
    queries: current.map(([event]) => ({
      queryKey: filterQueryKey(id, event),
      queryFn: () =>
        call(
          api.GET('/application/{application_id}/webhook/subscription/{subscription}/filter', {
            params: { path: { application_id: id, subscription: event } },
          }),
        ),
    })),
  });
  const available = (catalogue.data?.data ?? []).filter((type) => !(subscriptions.data?.subscriptions ?? {})[type.name]);
  const chosen = available.find((type) => type.name === choice);
  return (
    <>
      <section className="card" aria-labelledby="subs-heading">
        <h2 id="subs-heading">Subscriptions</h2>
        <ErrorMessage error={subscriptions.error ?? catalogue.error ?? upsert.error} />
        {current.length === 0 && subscriptions.isSuccess && (
          <p className="muted">No subscriptions yet: this webhook receives only test events.</p>
        )}
        {current.length > 0 && (
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Subscription list">
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Ensure delivery</th>
                  <th scope="col">Active</th>
                  <th scope="col">Filter</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {current.map(([event, flags], i) => (
                  <tr key={event}>
                    <td>
                      <code>{event}</code>
                    </td>
                    <td>
                      <FlagToggle
                        key={`ensure-${refusals}`}
                        label={`Ensure delivery of ${event}`}
                        value={flags.ensure_delivery}
                        onChange={(checked) => upsert.mutate({ event, flags: { ...flags, ensure_delivery: checked } })}
                      />
                    </td>
                    <td>
                      <FlagToggle
                        key={`active-${refusals}`}
                        label={`${event} active`}
                        value={flags.active}
                        onChange={(checked) => upsert.mutate({ event, flags: { ...flags, active: checked } })}
                      />
                    </td>
                    <td>
                      <button
                        type="button"
                        className="button subtle small filter-state"
                        aria-expanded={editing === event}
                        aria-controls={editing === event ? `filter-editor-${event}` : undefined}
                        onClick={() => setEditing(editing === event ? null : event)}
                      >
                        {filters[i]?.data ? (filters[i].data.data.filter ? 'Filtered' : 'Every event') : '…'}
                        <span className="visually-hidden"> — edit the filter of {event}</span>
                      </button>
                    </td>
                    <td>
                      <ConfirmButton
                        className="button subtle danger small"
                        label={`subscription ${event}`}
                        title={`Delete the subscription to ${event}?`}
                        body={
                          <p>
                            New {event} events are no longer sent to this webhook, and its {event} deliveries still waiting are cancelled.
                          </p>
                        }
                        confirm="Delete subscription"
                        {...confirmMutation(remove, event)}
                      >
                        Delete
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {editing && subscriptions.data?.subscriptions[editing] && (
          <div id={`filter-editor-${editing}`}>
            <FilterEditor key={editing} applicationId={id} event={editing} onClose={() => setEditing(null)} />
          </div>
        )}
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (choice) upsert.mutate({ event: choice, flags: { ensure_delivery: false, active: true } });
          }}
        >
          <div className="field">
            <label htmlFor="add-subscription">Event type</label>
            <select id="add-subscription" value={choice} onChange={(e) => setChoice(e.target.value)}>
              <option value="">Choose an event…</option>
              {available.map((type) => (
                <option key={type.name} value={type.name}>
                  {type.name}
                  {type.description ? ` — ${type.description}` : ''}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" className="button" disabled={!choice}>
            Subscribe
          </button>
        </form>
        {chosen && (
          <section className="subscription-preview" aria-label={`About ${chosen.name}`}>
            {chosen.description && <p>{chosen.description}</p>}
            <EventTypeDetails type={chosen} />
          </section>
        )}
      </section>
      {catalogue.data && <EventTypeCatalogue types={catalogue.data.data} subscribed={new Set(current.map(([event]) => event))} />}
    </>
  );
}

/**
 * A checkbox that shows the click at once and follows the stored value when the API answers
 * (back to what it was if the change was refused).
 */
function FlagToggle({ label, value, onChange }: { label: string; value: boolean; onChange(checked: boolean): void }) {
  const [shown, setShown] = useState(value);
  useEffect(() => setShown(value), [value]);
  return (
    <input
      type="checkbox"
      aria-label={label}
      checked={shown}
      onChange={(e) => {
        setShown(e.target.checked);
        onChange(e.target.checked);
      }}
    />
  );
}
