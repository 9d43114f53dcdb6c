import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, call } from '../api/client';
import { plural } from '../api/queries';
import { ConfirmButton } from '../components/ConfirmButton';
import { CopyableCode } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { JsonBlock } from '../components/JsonBlock';
import { Status } from '../components/Status';
import { Time } from '../components/Time';
import { outcomeInWords } from '../lib/outcome';
import { useApplicationId } from './ApplicationLayout';

/** An event: its payload and its deliveries, each a link (issue 26 #1). */
export function EventPage() {
  const { eventId = '' } = useParams();
  return <EventView key={eventId} eventId={eventId} />;
}

function EventView({ eventId }: { eventId: string }) {
  const id = useApplicationId();
  const queryClient = useQueryClient();
  const event = useQuery({
    queryKey: ['event', id, eventId],
    queryFn: () =>
      call(api.GET('/application/{application_id}/events/{event_id}', { params: { path: { application_id: id, event_id: eventId } } })),
  });
  const e = event.data?.data;
  const deliveries = useQueries({
    queries: (e?.deliveries ?? []).map((deliveryId) => ({
      queryKey: ['delivery', id, deliveryId],
      queryFn: () =>
        call(
          api.GET('/application/{application_id}/deliveries/{delivery_id}', {
            params: { path: { application_id: id, delivery_id: deliveryId } },
          }),
        ),
    })),
  });
  const replay = useMutation({
    mutationFn: () =>
      call(
        api.POST('/application/{application_id}/events/{event_id}/replay', { params: { path: { application_id: id, event_id: eventId } } }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['event', id, eventId] }),
  });
  return (
    <section className="card" aria-labelledby="event-heading">
      <p className="back">
        <Link to={`/applications/${id}/events`}>← Events</Link>
      </p>
      <h2 id="event-heading">{e ? `Event ${e.event}` : 'Event'}</h2>
      <ErrorMessage error={event.error} />
      {event.isPending && (
        <p className="loading" role="status">
          Loading the event…
        </p>
      )}
      {e && (
        <>
          <dl className="facts">
            <dt>Event id</dt>
            <dd>
              <CopyableCode value={e.id} what="event id" />
            </dd>
            <dt>Created</dt>
            <dd>
              <Time iso={e.created_at} />
            </dd>
            <dt>Idempotency key</dt>
            <dd>
              {e.idempotency_key ? <CopyableCode value={e.idempotency_key} what="idempotency key" /> : <span className="muted">none</span>}
            </dd>
            <dt>Ordering key</dt>
            <dd>
              {e.ordering_key ? (
                <>
                  <CopyableCode value={e.ordering_key} what="ordering key" />{' '}
                  <span className="muted">delivered after the earlier events with this key</span>
                </>
              ) : (
                <span className="muted">none</span>
              )}
            </dd>
          </dl>
          <h3>Payload</h3>
          <JsonBlock value={e.payload} label="Payload" />
          <h3>Deliveries</h3>
          {e.deliveries.length === 0 ? (
            <p className="muted">None: no active subscription to {e.event} when it was published.</p>
          ) : (
            <ul className="plain-list">
              {e.deliveries.map((deliveryId, i) => {
                const d = deliveries[i]?.data?.data;
                return (
                  <li key={deliveryId}>
                    <Link to={`/applications/${id}/deliveries/${deliveryId}`}>
                      <code>{deliveryId}</code>
                    </Link>
                    <span className="inline-facts">
                      {d && <Status status={d.status} />}
                      {d && <span className="muted">{outcomeInWords(d.attempts.at(-1) ?? null) ?? 'not tried yet'}</span>}
                    </span>
                  </li>
                );
              })}
            </ul>
          )}
          <div className="actions">
            <ConfirmButton
              tone="primary"
              className="button"
              title={`Replay ${e.event}?`}
              body={
                <p>
                  The event is sent again to the webhook as a new delivery, if it is still subscribed to {e.event}. Receivers see it twice.
                </p>
              }
              confirm="Replay event"
              onConfirm={() => replay.mutateAsync()}
              pending={replay.isPending}
              error={replay.error}
            >
              Replay event
            </ConfirmButton>
            {replay.data && <ReplayResult applicationId={id} deliveries={replay.data.data.deliveries} />}
          </div>
        </>
      )}
    </section>
  );
}

export function ReplayResult({ applicationId, deliveries }: { applicationId: number; deliveries: string[] }) {
  return (
    <span className="ok" role="status">
      {deliveries.length === 0 ? (
        'Nothing queued: no active subscription to this event.'
      ) : (
        <>
          Queued {plural(deliveries.length, 'delivery', 'deliveries')}:{' '}
          {deliveries.map((d) => (
            <Link key={d} to={`/applications/${applicationId}/deliveries/${d}`} className="chip">
              {d}
            </Link>
          ))}
        </>
      )}
    </span>
  );
}
