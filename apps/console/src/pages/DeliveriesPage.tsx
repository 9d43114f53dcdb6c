import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, call, type Schemas } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { formatTime, Status } from '../components/Status';
import { useApplicationId } from './ApplicationLayout';

type DeliveryStatus = Schemas['DeliverySummaryDto']['status'];
const STATUSES: DeliveryStatus[] = ['pending', 'sending', 'paused', 'succeeded', 'failed', 'cancelled'];
/** New deliveries appear without a reload: the first page is asked again this often. */
const POLL_MS = 2_000;

export function DeliveriesPage() {
  const id = useApplicationId();
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [event, setEvent] = useState('');
  const catalogue = useQuery({
    queryKey: ['event-types'],
    queryFn: () => call(api.GET('/event_types', { params: { query: { limit: 100 } } })),
  });
  const deliveries = useInfiniteQuery({
    queryKey: ['deliveries', id, status, event],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/application/{application_id}/deliveries', {
          params: {
            path: { application_id: id },
            query: { limit: 25, cursor: pageParam, ...(status ? { status } : {}), ...(event ? { event } : {}) },
          },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: POLL_MS,
  });
  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = deliveries;
  useEffect(() => {
    const node = sentinel.current;
    if (!node || !hasNextPage) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !isFetchingNextPage) void fetchNextPage();
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  const rows = deliveries.data?.pages.flatMap((page) => page.data) ?? [];
  const eventNames = ['webhook.test', ...(catalogue.data?.data.map((t) => t.name) ?? [])];
  return (
    <div className="stack">
      <section className="card" aria-labelledby="log-heading">
        <div className="section-head">
          <h2 id="log-heading">Delivery log</h2>
          <div className="filters">
            <label>
              Status{' '}
              <select value={status} onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}>
                <option value="">any</option>
                {STATUSES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>
            <label>
              Event{' '}
              <select value={event} onChange={(e) => setEvent(e.target.value)}>
                <option value="">any</option>
                {eventNames.map((name) => (
                  <option key={name}>{name}</option>
                ))}
              </select>
            </label>
          </div>
        </div>
        <ErrorMessage error={deliveries.error} />
        {deliveries.isSuccess && rows.length === 0 && (
          <p className="muted">No deliveries{status || event ? ' match these filters' : ' yet'}.</p>
        )}
        {rows.length > 0 && (
          <table className="log">
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Link to={`/applications/${id}/deliveries/${d.id}`}>
                      <code>{d.id}</code>
                    </Link>
                  </td>
                  <td>
                    <code>{d.event}</code>
                  </td>
                  <td>
                    <Status status={d.status} />
                  </td>
                  <td>{d.attempt_count}</td>
                  <td>{formatTime(d.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div ref={sentinel} className="sentinel" />
        {hasNextPage && (
          <button type="button" className="button subtle" disabled={isFetchingNextPage} onClick={() => void fetchNextPage()}>
            {isFetchingNextPage ? 'Loading…' : 'More deliveries'}
          </button>
        )}
      </section>
      <RecoverForm applicationId={id} />
    </div>
  );
}

/** One new attempt for every failed delivery created since a time (PRODUCT.md §8). */
function RecoverForm({ applicationId }: { applicationId: number }) {
  const [since, setSince] = useState('');
  const recover = useMutation({
    mutationFn: (local: string) =>
      call(
        api.POST('/application/{application_id}/deliveries/recover', {
          params: { path: { application_id: applicationId } },
          body: { since: new Date(local).toISOString() },
        }),
      ),
  });
  return (
    <section className="card" aria-labelledby="recover-heading">
      <h2 id="recover-heading">Recover failed deliveries</h2>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (since) recover.mutate(since);
        }}
      >
        <div className="field">
          <label htmlFor="recover-since">Failed since</label>
          <input id="recover-since" type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} required />
        </div>
        <button type="submit" className="button" disabled={!since || recover.isPending}>
          Recover failures
        </button>
      </form>
      <ErrorMessage error={recover.error} />
      {recover.data && (
        <p className="ok" role="status">
          {recover.data.data.requeued} {recover.data.data.requeued === 1 ? 'delivery' : 'deliveries'} queued again.
        </p>
      )}
    </section>
  );
}
