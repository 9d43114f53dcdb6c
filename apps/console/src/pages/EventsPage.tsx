import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, call } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { formatTime } from '../components/Status';
import { useApplicationId } from './ApplicationLayout';

export function EventsPage() {
  const id = useApplicationId();
  const events = useInfiniteQuery({
    queryKey: ['events', id],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/application/{application_id}/events', {
          params: { path: { application_id: id }, query: { limit: 25, cursor: pageParam } },
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
      <h2 id="events-heading">Events</h2>
      <ErrorMessage error={events.error ?? replay.error} />
      {replay.data && (
        <p className="ok" role="status">
          Replayed as {replay.data.data.deliveries.length ? replay.data.data.deliveries.join(', ') : 'no delivery (no active subscription)'}
          .
        </p>
      )}
      {events.isSuccess && rows.length === 0 && <p className="muted">No events yet.</p>}
      {rows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Type</th>
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
                  <code>{e.id}</code>
                </td>
                <td>
                  <code>{e.event}</code>
                </td>
                <td>{formatTime(e.created_at)}</td>
                <td>
                  {e.deliveries.map((d) => (
                    <Link key={d} to={`/applications/${id}/deliveries/${d}`} className="chip">
                      {d}
                    </Link>
                  ))}
                </td>
                <td>
                  <button type="button" className="button subtle" onClick={() => replay.mutate(e.id)}>
                    Replay<span className="visually-hidden"> event {e.id}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {events.hasNextPage && (
        <button type="button" className="button subtle" onClick={() => void events.fetchNextPage()}>
          More events
        </button>
      )}
    </section>
  );
}
