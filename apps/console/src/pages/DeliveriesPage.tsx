import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { HeraldApiError, type Schemas } from '@herald/client';
import { api, call } from '../api/client';
import {
  countsKey,
  DELIVERY_STATUSES,
  definedOnly,
  deliveryPagesQuery,
  listDeliveries,
  LOG_PAGE_SIZE,
  logFiltersFrom,
  plural,
  useDeliveryCounts,
  useEventTypeNames,
  type LogWindow,
} from '../api/queries';
import { ConfirmButton } from '../components/ConfirmButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { MoreButton } from '../components/MoreButton';
import { Status } from '../components/Status';
import { Time } from '../components/Time';
import { outcomeInWords } from '../lib/outcome';
import { useMediaQuery } from '../lib/media';
import { useApplicationId } from './ApplicationLayout';

type Row = Schemas['DeliveryLogEntryDto'];
/** New deliveries appear without a reload: the newest page alone is asked again this often. */
const POLL_MS = 2_000;
/** Reads of unchanged rows after which the counts are read anyway (6 s): changes further down the log. */
const COUNTS_EVERY_READS = 3;
/** Recover needs a start; "any time" is every delivery there is. */
const BEGINNING = '1970-01-01T00:00:00.000Z';

export function DeliveriesPage() {
  const id = useApplicationId();
  const queryClient = useQueryClient();
  // The filters live in the address: a link ("See failed deliveries") or a reload keeps them.
  const [params, setParams] = useSearchParams();
  const filters = logFiltersFrom(params);
  const status = filters.status ?? '';
  const event = filters.event ?? '';
  const sinceInput = params.get('since') ?? '';
  const untilInput = params.get('until') ?? '';
  const window: LogWindow = { event: filters.event, since: filters.since, until: filters.until };
  const setFilter = (name: string, value: string) =>
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        if (value) next.set(name, value);
        else next.delete(name);
        return next;
      },
      { replace: true },
    );
  const { names } = useEventTypeNames();
  const wide = useMediaQuery('(min-width: 641px)');
  const [showFilters, setShowFilters] = useState(Boolean(event || sinceInput || untilInput));
  const pagesQuery = deliveryPagesQuery(id, filters);
  const pagesKeyText = JSON.stringify(pagesQuery.queryKey);
  const pages = useInfiniteQuery(pagesQuery);
  // After the first page: the rows are what the user waits for; the counts follow a moment later.
  const counts = useDeliveryCounts(id, window, { enabled: pages.isSuccess });
  // Only the newest page is polled (issue 26: polling every loaded page cost 60 requests in 10 s
  // with 12 pages loaded); its rows replace their older copies and new ones go on top.
  const head = useQuery({
    queryKey: ['deliveries', id, 'head', filters],
    queryFn: () => listDeliveries(id, filters),
    // Starts from the first page as loaded (not a second request for it on the first screen).
    enabled: pages.isSuccess,
    initialData: () => pages.data?.pages[0],
    initialDataUpdatedAt: () => pages.dataUpdatedAt,
    refetchInterval: POLL_MS,
  });
  // The counts beside the filter are read right after a read of the newest rows, never on a pace
  // of their own, so they never say what the rows below them do not (polled apart, a row read
  // `sending` beside `sending 0`, or beside `succeeded 7` read a moment after it): at once when the
  // rows changed, and every COUNTS_EVERY_READS reads when they did not (what changed further down
  // the log). Rows that come back the same are the same object (React Query's structural
  // sharing). New filters read their counts by their own key.
  const lastHead = useRef({ key: pagesKeyText, data: head.data, readAt: head.dataUpdatedAt, unchanged: 0 });
  const refetchCounts = counts.refetch;
  useEffect(() => {
    const last = lastHead.current;
    if (last.key === pagesKeyText && last.readAt === head.dataUpdatedAt) return;
    const changed = last.data !== head.data;
    const unchanged = changed ? 0 : last.unchanged + 1;
    lastHead.current = { key: pagesKeyText, data: head.data, readAt: head.dataUpdatedAt, unchanged: unchanged % COUNTS_EVERY_READS };
    if (!pages.isSuccess || last.key !== pagesKeyText || last.data === undefined) return;
    if (changed || unchanged === COUNTS_EVERY_READS) void refetchCounts({ cancelRefetch: false });
  }, [head.data, head.dataUpdatedAt, pagesKeyText, pages.isSuccess, refetchCounts]);
  const [retried, setRetried] = useState<ReadonlyMap<string, Schemas['DeliverySummaryDto']>>(new Map());
  const loaded = pages.data?.pages.flatMap((page) => page.data) ?? [];
  const fresh = new Map((head.data?.data ?? []).map((row) => [row.id, row]));
  const newestLoaded = loaded[0]?.id;
  const newer = (head.data?.data ?? []).filter((row) => newestLoaded === undefined || row.id > newestLoaded);
  // A full page of newer rows may hide a gap between them and the loaded ones: start over.
  const gap = newestLoaded !== undefined && newer.length === LOG_PAGE_SIZE;
  useEffect(() => {
    if (gap) void queryClient.resetQueries({ queryKey: JSON.parse(pagesKeyText) as unknown[] });
  }, [gap, pagesKeyText, queryClient]);
  const rows: Row[] = [...newer, ...loaded.map((row) => fresh.get(row.id) ?? row)].map((row) => {
    const after = retried.get(row.id);
    return after && !fresh.has(row.id) ? { ...row, ...after } : row;
  });

  const retry = useMutation({
    mutationFn: (deliveryId: string) =>
      call(
        api.POST('/application/{application_id}/deliveries/{delivery_id}/retry', {
          params: { path: { application_id: id, delivery_id: deliveryId } },
        }),
      ),
    onSuccess: (res) => {
      setRetried((current) => new Map(current).set(res.data.id, res.data));
      void head.refetch();
      void queryClient.invalidateQueries({ queryKey: countsKey(id) });
    },
  });
  const recover = useMutation({
    mutationFn: () =>
      call(
        api.POST('/application/{application_id}/deliveries/recover', {
          params: { path: { application_id: id } },
          body: { since: window.since ?? BEGINNING, ...definedOnly({ until: window.until, event: window.event }) },
        }),
      ),
    onSuccess: () => {
      void head.refetch();
      void queryClient.invalidateQueries({ queryKey: countsKey(id) });
    },
  });

  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = pages;
  useEffect(() => {
    const node = sentinel.current;
    if (!node || !hasNextPage) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !isFetchingNextPage) void fetchNextPage();
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const failed = counts.data?.failed ?? 0;
  const filtered = Boolean(status || event || sinceInput || untilInput);
  const activeFilters = [event, sinceInput, untilInput].filter(Boolean).length;
  return (
    <div className="stack">
      <section className="card" aria-labelledby="log-heading">
        <div className="section-head">
          <h2 id="log-heading">Delivery log</h2>
          <FindById applicationId={id} />
        </div>
        {/* On a phone the filters fold away so the rows come first; on a wider screen they are always open. */}
        <details className="filter-panel" open={wide || showFilters} onToggle={(e) => setShowFilters(e.currentTarget.open)}>
          <summary>Filters{activeFilters > 0 ? ` (${activeFilters})` : ''}</summary>
          <div className="filters">
            <div className="field">
              <label htmlFor="filter-event">Event</label>
              <select id="filter-event" value={event} onChange={(e) => setFilter('event', e.target.value)}>
                <option value="">any event</option>
                {names.map((name) => (
                  <option key={name}>{name}</option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="filter-since">Created from</label>
              <input id="filter-since" type="datetime-local" value={sinceInput} onChange={(e) => setFilter('since', e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor="filter-until">Created before</label>
              <input id="filter-until" type="datetime-local" value={untilInput} onChange={(e) => setFilter('until', e.target.value)} />
            </div>
            {filtered && (
              <button type="button" className="button subtle" onClick={() => setParams(new URLSearchParams(), { replace: true })}>
                Clear filters
              </button>
            )}
          </div>
        </details>
        <div className="status-counts" role="group" aria-label="Status">
          <button type="button" aria-pressed={status === ''} onClick={() => setFilter('status', '')}>
            All <span className="count">{counts.data ? counts.data.total.toLocaleString() : '…'}</span>
          </button>
          {DELIVERY_STATUSES.map((s) => (
            <button key={s} type="button" aria-pressed={status === s} className={`count-${s}`} onClick={() => setFilter('status', s)}>
              {s} <span className="count">{counts.data ? counts.data[s].toLocaleString() : '…'}</span>
            </button>
          ))}
        </div>
        {(status === '' || status === 'failed') && failed > 0 && (
          <div className="bulk">
            <ConfirmButton
              tone="primary"
              className="button"
              title={`Retry ${plural(failed, 'failed delivery', 'failed deliveries')}?`}
              body={
                <p>
                  Each failed delivery {event ? <>of {event} </> : null}
                  {sinceInput || untilInput ? 'created in the chosen time range ' : ''}gets one new attempt now, with no automatic retries
                  after it. {plural(failed, 'delivery', 'deliveries')} will be queued.
                </p>
              }
              confirm={`Retry ${failed.toLocaleString()}`}
              onConfirm={() => recover.mutateAsync()}
              pending={recover.isPending}
              error={recover.error}
            >
              Retry all {failed.toLocaleString()} failed in this view
            </ConfirmButton>
          </div>
        )}
        {/* Outside the button's block: once they are queued there is no failure left to offer retrying. */}
        {recover.data && (
          <p className="ok" role="status">
            {plural(recover.data.data.requeued, 'delivery', 'deliveries')} queued again.
          </p>
        )}
        <ErrorMessage error={pages.error ?? retry.error} />
        {pages.isPending && (
          <p className="loading" role="status">
            Loading deliveries…
          </p>
        )}
        {pages.isSuccess && rows.length === 0 && (
          <p className="muted empty">
            {filtered ? 'No deliveries match these filters.' : 'No deliveries yet. Publish an event or send a test event.'}
          </p>
        )}
        {rows.length > 0 && (
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Delivery list">
            <table className="log">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last response</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Link to={`/applications/${id}/deliveries/${d.id}`} className="row-link">
                        {d.event}
                        <span className="visually-hidden"> delivery {d.id}</span>
                      </Link>
                      <span className="id-hint" aria-hidden="true">
                        {d.id}
                      </span>
                    </td>
                    <td className="cell-status">
                      <Status status={d.status} />
                    </td>
                    <td data-label="Last response">
                      <Outcome row={d} />
                    </td>
                    <td className="number" data-label="Attempts">
                      {d.attempt_count}
                    </td>
                    <td data-label="Next attempt">
                      <NextAttempt row={d} />
                    </td>
                    <td data-label="Created">
                      <Time iso={d.created_at} />
                    </td>
                    <td className="row-actions">
                      {d.status === 'failed' && (
                        <button
                          type="button"
                          className="button subtle small"
                          disabled={retry.isPending && retry.variables === d.id}
                          onClick={() => retry.mutate(d.id)}
                        >
                          Retry<span className="visually-hidden"> delivery {d.id}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <div ref={sentinel} className="sentinel" />
        <MoreButton pages={pages}>More deliveries</MoreButton>
      </section>
    </div>
  );
}

/** When the next attempt goes out, in the words that apply: a paused one waits for Enable, a late one is due. */
function NextAttempt({ row }: { row: Row }) {
  if (row.status === 'paused') return <span className="muted">when enabled</span>;
  if (!row.next_attempt_at) return <span className="muted">—</span>;
  if (Date.parse(row.next_attempt_at) <= Date.now()) return <span>due now</span>;
  return <Time iso={row.next_attempt_at} />;
}

function Outcome({ row }: { row: Row }) {
  const words = outcomeInWords(row.last_attempt);
  if (!words) return <span className="muted">not tried yet</span>;
  const good = row.last_attempt?.response_status !== null && row.last_attempt!.response_status! < 300;
  return <span className={good ? 'outcome' : 'outcome outcome-bad'}>{words}</span>;
}

/**
 * Find by id (issue 26 #8): a delivery id opens the delivery, an event id the event, anything
 * else is looked up as an idempotency key among the application's events. Each is asked for
 * first, so an id of another application or a typo says so here rather than on an error page.
 */
export function FindById({ applicationId }: { applicationId: number }) {
  const navigate = useNavigate();
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const lookup = useMutation({
    mutationFn: async (text: string) => {
      const path = { application_id: applicationId };
      if (text.startsWith('dlv_')) {
        await call(api.GET('/application/{application_id}/deliveries/{delivery_id}', { params: { path: { ...path, delivery_id: text } } }));
        return `/applications/${applicationId}/deliveries/${text}`;
      }
      if (text.startsWith('evt_')) {
        await call(api.GET('/application/{application_id}/events/{event_id}', { params: { path: { ...path, event_id: text } } }));
        return `/applications/${applicationId}/events/${text}`;
      }
      const found = await call(
        api.GET('/application/{application_id}/events', { params: { path, query: { idempotency_key: text, limit: 1 } } }),
      );
      return found.data[0] ? `/applications/${applicationId}/events/${found.data[0].id}` : null;
    },
    onSuccess: (to) => {
      if (to) navigate(to);
      else setProblem(`No delivery, event or idempotency key here is ${value.trim()}.`);
    },
    onError: (error) =>
      setProblem(
        error instanceof HeraldApiError && error.status === 404
          ? `No delivery, event or idempotency key here is ${value.trim()}.`
          : error.message,
      ),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setProblem(null);
    if (value.trim()) lookup.mutate(value.trim());
  };
  return (
    <form className="find" role="search" onSubmit={submit}>
      <label htmlFor="find-id" className="visually-hidden">
        Find by delivery id, event id or idempotency key
      </label>
      <input
        id="find-id"
        type="search"
        placeholder="dlv_…, evt_… or key"
        spellCheck={false}
        value={value}
        aria-describedby={problem ? 'find-problem' : undefined}
        onChange={(e) => setValue(e.target.value)}
      />
      <button type="submit" className="button" disabled={lookup.isPending}>
        Find
      </button>
      {problem && (
        <p id="find-problem" className="field-error find-problem" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
