import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import { definedOnly, plural, useEventTypeNames } from '../api/queries';
import { ConfirmButton, confirmMutation } from '../components/ConfirmButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { MoreButton } from '../components/MoreButton';
import { Time } from '../components/Time';
import { useApplicationId } from './ApplicationLayout';
import { ReplayResult } from './EventPage';

export function EventsPage() {
  const id = useApplicationId();
  const [params, setParams] = useSearchParams();
  const type = params.get('event') ?? '';
  const { names } = useEventTypeNames();
  const events = useInfiniteQuery({
    queryKey: ['events', id, type],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/application/{application_id}/events', {
          params: { path: { application_id: id }, query: { limit: 25, ...definedOnly({ cursor: pageParam, event: type }) } },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const replay = useMutation({
    mutationFn: (eventId: string) =>
      call(
        api.POST('/application/{application_id}/events/{event_id}/replay', { params: { path: { application_id: id, event_id: eventId } } }),
      ),
    onSuccess: () => void events.refetch(),
  });
  const rows = events.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section className="card" aria-labelledby="events-heading">
      <div className="section-head">
        <h2 id="events-heading">Events</h2>
        <div className="field inline-field">
          <label htmlFor="events-type">Event type</label>
          <select
            id="events-type"
            value={type}
            onChange={(e) => setParams(e.target.value ? { event: e.target.value } : {}, { replace: true })}
          >
            <option value="">any event</option>
            {names.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </div>
      </div>
      <ErrorMessage error={events.error} />
      {replay.data && <ReplayResult applicationId={id} deliveries={replay.data.data.deliveries} />}
      {events.isPending && (
        <p className="loading" role="status">
          Loading events…
        </p>
      )}
      {events.isSuccess && rows.length === 0 && <p className="muted empty">{type ? `No ${type} events.` : 'No events yet.'}</p>}
      {rows.length > 0 && (
        <div className="table-scroll" tabIndex={0} role="region" aria-label="Event list">
          <table className="log">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Created</th>
                <th scope="col">Deliveries</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td>
                    <Link to={`/applications/${id}/events/${e.id}`} className="row-link">
                      {e.event}
                      <span className="visually-hidden"> event {e.id}</span>
                    </Link>
                    <span className="id-hint" aria-hidden="true">
                      {e.id}
                    </span>
                  </td>
                  <td data-label="Created">
                    <Time iso={e.created_at} />
                  </td>
                  <td data-label="Deliveries">
                    {e.deliveries.length === 0 ? (
                      <span className="muted">none</span>
                    ) : e.deliveries.length === 1 ? (
                      <Link to={`/applications/${id}/deliveries/${e.deliveries[0]}`}>
                        1 delivery<span className="visually-hidden"> {e.deliveries[0]}</span>
                      </Link>
                    ) : (
                      <Link to={`/applications/${id}/events/${e.id}`}>{plural(e.deliveries.length, 'delivery', 'deliveries')}</Link>
                    )}
                  </td>
                  <td className="row-actions">
                    <ConfirmButton
                      tone="primary"
                      className="button subtle small"
                      label={`event ${e.id}`}
                      title={`Replay ${e.event}?`}
                      body={
                        <p>
                          The event is sent again to the webhook as a new delivery, if it is still subscribed to {e.event}. Receivers see it
                          twice.
                        </p>
                      }
                      confirm="Replay event"
                      {...confirmMutation(replay, e.id)}
                    >
                      Replay
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <MoreButton pages={events}>More events</MoreButton>
    </section>
  );
}
