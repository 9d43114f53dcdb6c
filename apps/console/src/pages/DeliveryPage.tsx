import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import type { Schemas } from '@herald/client';
import { api, call } from '../api/client';
import { countsKey } from '../api/queries';
import { CopyableCode } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { JsonBlock } from '../components/JsonBlock';
import { Status } from '../components/Status';
import { Time } from '../components/Time';
import { errorInWords, isSuccessStatus } from '../lib/outcome';
import { useApplicationId } from './ApplicationLayout';

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export function DeliveryPage() {
  const { deliveryId = '' } = useParams();
  // Keyed: a "queued" message or an error of one delivery never follows you to another (issue 26 #11).
  return <DeliveryView key={deliveryId} deliveryId={deliveryId} />;
}

export function useDelivery(applicationId: number, deliveryId: string) {
  return useQuery({
    queryKey: ['delivery', applicationId, deliveryId],
    queryFn: () =>
      call(
        api.GET('/application/{application_id}/deliveries/{delivery_id}', {
          params: { path: { application_id: applicationId, delivery_id: deliveryId } },
        }),
      ),
    // Follow it while it is still moving.
    refetchInterval: (query) => (query.state.data && FINISHED.has(query.state.data.data.status) ? false : 1_000),
  });
}

function DeliveryView({ deliveryId }: { deliveryId: string }) {
  const id = useApplicationId();
  const queryClient = useQueryClient();
  const delivery = useDelivery(id, deliveryId);
  const d = delivery.data?.data;
  const event = useQuery({
    queryKey: ['event', id, d?.event_id],
    queryFn: () =>
      call(api.GET('/application/{application_id}/events/{event_id}', { params: { path: { application_id: id, event_id: d!.event_id } } })),
    enabled: Boolean(d),
    staleTime: Infinity,
  });
  const retry = useMutation({
    mutationFn: () =>
      call(
        api.POST('/application/{application_id}/deliveries/{delivery_id}/retry', {
          params: { path: { application_id: id, delivery_id: deliveryId } },
        }),
      ),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['delivery', id, deliveryId] });
      void queryClient.invalidateQueries({ queryKey: countsKey(id) });
    },
  });
  const latest = d?.attempts.at(-1);
  return (
    <section className="card" aria-labelledby="delivery-heading">
      <p className="back">
        <Link to={`/applications/${id}/deliveries`}>← Delivery log</Link>
      </p>
      <div className="section-head">
        <h2 id="delivery-heading">{d ? `Delivery of ${d.event}` : 'Delivery'}</h2>
        {d && <Status status={d.status} />}
      </div>
      <ErrorMessage error={delivery.error} />
      {delivery.isPending && (
        <p className="loading" role="status">
          Loading the delivery…
        </p>
      )}
      {d && (
        <>
          <dl className="facts">
            <dt>Delivery id</dt>
            <dd>
              <CopyableCode value={d.id} what="delivery id" />
            </dd>
            <dt>Event</dt>
            <dd>
              <Link to={`/applications/${id}/events/${d.event_id}`}>
                {d.event}
                <span className="visually-hidden"> event {d.event_id}</span>
              </Link>{' '}
              <CopyableCode value={d.event_id} what="event id" className="muted" />
            </dd>
            <dt>Created</dt>
            <dd>
              <Time iso={d.created_at} />
            </dd>
            <dt>Attempts</dt>
            <dd>{d.attempt_count}</dd>
            <dt>Next attempt</dt>
            <dd>
              <Time
                iso={d.next_attempt_at}
                empty={FINISHED.has(d.status) ? 'none: finished' : d.status === 'paused' ? 'when the endpoint is enabled' : '—'}
              />
            </dd>
          </dl>
          <div className="actions">
            <button
              type="button"
              className="button primary"
              disabled={d.status === 'cancelled' || d.status === 'paused' || d.status === 'sending' || retry.isPending}
              onClick={() => retry.mutate()}
            >
              Retry delivery
            </button>
            {d.status === 'paused' && <span className="muted">Paused while the endpoint is disabled: enabling it sends it.</span>}
            {d.status === 'cancelled' && <span className="muted">Cancelled: replay the event to send it again.</span>}
            {retry.isSuccess && (
              <span className="ok" role="status">
                A new attempt is queued.
              </span>
            )}
          </div>
          <ErrorMessage error={retry.error} />
          <div className="exchange">
            <section aria-labelledby="request-heading" className="exchange-side">
              <h3 id="request-heading">Request</h3>
              {latest ? (
                <p className="url">
                  <span className="method">POST</span> <CopyableCode value={latest.url} what="target URL" />
                </p>
              ) : (
                <p className="muted">Not sent yet.</p>
              )}
              {latest?.request_headers && (
                <>
                  <h4>Headers</h4>
                  <pre className="code-block" aria-label="Request headers" tabIndex={0}>
                    {Object.entries(latest.request_headers)
                      .map(([k, v]) => `${k}: ${v}`)
                      .join('\n')}
                  </pre>
                </>
              )}
              <h4>Body</h4>
              <ErrorMessage error={event.error} />
              {event.data ? <JsonBlock value={event.data.data.payload} label="Request body" /> : <p className="muted">Loading…</p>}
            </section>
            <section aria-labelledby="attempts-heading" className="exchange-side">
              <h3 id="attempts-heading">Responses</h3>
              {d.attempts.length === 0 ? <p className="muted">No attempt yet.</p> : <AttemptTimeline attempts={d.attempts} />}
            </section>
          </div>
        </>
      )}
    </section>
  );
}

function AttemptTimeline({ attempts }: { attempts: Schemas['DeliveryAttemptDto'][] }) {
  return (
    <ol className="timeline attempts">
      {[...attempts].reverse().map((a, index) => {
        const outcome = isSuccessStatus(a.response_status) ? 'succeeded' : 'failed';
        return (
          <li key={a.number} className={`attempt attempt-${outcome}`} aria-label={`Attempt ${a.number}`}>
            <span className="dot" aria-hidden="true" />
            <div className="attempt-body">
              <div className="attempt-head">
                <strong>Attempt {a.number}</strong>
                <span className={`status status-${outcome}`}>{a.response_status !== null ? `HTTP ${a.response_status}` : 'no answer'}</span>
                {a.error && <span className="outcome-bad">{errorInWords(a.error)}</span>}
                <span className="muted">{a.duration_ms} ms</span>
                <Time iso={a.started_at} />
              </div>
              {a.response_excerpt ? (
                <JsonBlock value={a.response_excerpt} label={`Response body of attempt ${a.number}`} />
              ) : (
                <p className="muted">{a.response_status !== null ? 'Empty response body.' : 'The receiver did not answer.'}</p>
              )}
              {/* Only what is still ahead: an earlier attempt's "next" is the attempt listed above it. */}
              {index === 0 && a.next_attempt_at && Date.parse(a.next_attempt_at) > Date.now() && (
                <p className="muted">
                  Next attempt <Time iso={a.next_attempt_at} />
                </p>
              )}
            </div>
          </li>
        );
      })}
    </ol>
  );
}
