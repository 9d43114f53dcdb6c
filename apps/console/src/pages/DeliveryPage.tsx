import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, call, type Schemas } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { formatTime, Status } from '../components/Status';
import { useApplicationId } from './ApplicationLayout';

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export function DeliveryPage() {
  const id = useApplicationId();
  const { deliveryId = '' } = useParams();
  const queryClient = useQueryClient();
  const delivery = useQuery({
    queryKey: ['delivery', id, deliveryId],
    queryFn: () =>
      call(
        api.GET('/application/{application_id}/deliveries/{delivery_id}', {
          params: { path: { application_id: id, delivery_id: deliveryId } },
        }),
      ),
    // Follow it while it is still moving.
    refetchInterval: (query) => (query.state.data && FINISHED.has(query.state.data.data.status) ? false : 1_000),
  });
  const retry = useMutation({
    mutationFn: () =>
      call(
        api.POST('/application/{application_id}/deliveries/{delivery_id}/retry', {
          params: { path: { application_id: id, delivery_id: deliveryId } },
        }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['delivery', id, deliveryId] }),
  });
  const d = delivery.data?.data;
  return (
    <section className="card" aria-labelledby="delivery-heading">
      <p>
        <Link to={`/applications/${id}/deliveries`}>← Delivery log</Link>
      </p>
      <div className="section-head">
        <h2 id="delivery-heading">
          Delivery <code>{deliveryId}</code>
        </h2>
        {d && <Status status={d.status} />}
      </div>
      <ErrorMessage error={delivery.error ?? retry.error} />
      {d && (
        <>
          <dl className="facts">
            <dt>Event</dt>
            <dd>
              <code>{d.event}</code> <code className="muted">{d.event_id}</code>
            </dd>
            <dt>Created</dt>
            <dd>{formatTime(d.created_at)}</dd>
            <dt>Next attempt</dt>
            <dd>{formatTime(d.next_attempt_at)}</dd>
          </dl>
          <div className="actions">
            <button type="button" className="button" disabled={d.status === 'cancelled' || retry.isPending} onClick={() => retry.mutate()}>
              Retry delivery
            </button>
            {retry.isSuccess && (
              <span className="ok" role="status">
                A new attempt is queued.
              </span>
            )}
          </div>
          <h3>Attempts</h3>
          {d.attempts.length === 0 ? <p className="muted">No attempt yet.</p> : <AttemptTimeline attempts={d.attempts} />}
        </>
      )}
    </section>
  );
}

function attemptOutcome(a: Schemas['DeliveryAttemptDto']): 'succeeded' | 'failed' {
  return a.response_status !== null && a.response_status >= 200 && a.response_status < 300 ? 'succeeded' : 'failed';
}

function AttemptTimeline({ attempts }: { attempts: Schemas['DeliveryAttemptDto'][] }) {
  return (
    <ol className="timeline attempts">
      {[...attempts].reverse().map((a) => {
        const outcome = attemptOutcome(a);
        return (
          <li key={a.number} className={`attempt attempt-${outcome}`}>
            <span className="dot" aria-hidden="true" />
            <div className="attempt-body">
              <div className="attempt-head">
                <strong>Attempt {a.number}</strong>
                <span className={`status status-${outcome}`}>{outcome}</span>
                <span>{a.response_status !== null ? `HTTP ${a.response_status}` : 'no answer'}</span>
                <span className="muted">{a.duration_ms} ms</span>
                <span className="muted">{formatTime(a.started_at)}</span>
              </div>
              {a.error && (
                <p>
                  Error: <code>{a.error}</code>
                </p>
              )}
              <p className="muted url">{a.url}</p>
              {a.response_excerpt && (
                <details>
                  <summary>Response excerpt</summary>
                  <pre>{a.response_excerpt}</pre>
                </details>
              )}
              {a.request_headers && (
                <details>
                  <summary>Headers sent</summary>
                  <pre>
                    {Object.entries(a.request_headers)
                      .map(([k, v]) => `${k}: ${v}`)
                      .join('\n')}
                  </pre>
                </details>
              )}
            </div>
          </li>
        );
      })}
    </ol>
  );
}
