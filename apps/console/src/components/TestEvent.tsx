import { useMutation } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, call } from '../api/client';
import { outcomeInWords } from '../lib/outcome';
import { useDelivery } from '../pages/DeliveryPage';
import { ErrorMessage } from './ErrorMessage';
import { Status } from './Status';

/** Sends a webhook.test event and follows its outcome live; on the endpoint page and beside the webhook form. */
export function TestEvent({ applicationId, note }: { applicationId: number; note?: string }) {
  const send = useMutation({
    mutationFn: () => call(api.POST('/application/{application_id}/webhook/test', { params: { path: { application_id: applicationId } } })),
  });
  const delivery = send.data?.data.deliveries[0];
  return (
    <section className="card" aria-labelledby="test-heading">
      <h2 id="test-heading">Test event</h2>
      <p className="muted">Sends a webhook.test event to the target, whether or not it is subscribed.</p>
      {note && <p className="hint">{note}</p>}
      <button type="button" className="button primary" disabled={send.isPending} onClick={() => send.mutate()}>
        Send test event
      </button>
      <ErrorMessage error={send.error} />
      {delivery && <TestOutcome key={delivery} applicationId={applicationId} deliveryId={delivery} />}
    </section>
  );
}

/** Whether the test event arrived, followed live (issue 26 #11: a bare link said nothing). */
function TestOutcome({ applicationId, deliveryId }: { applicationId: number; deliveryId: string }) {
  const delivery = useDelivery(applicationId, deliveryId);
  const d = delivery.data?.data;
  const last = d?.attempts.at(-1) ?? null;
  const words = outcomeInWords(last);
  return (
    <div className="test-outcome" role="status">
      {!d || d.status === 'pending' || d.status === 'sending' ? (
        <p>{words ? `Last try: ${words}. Retrying…` : 'Sending the test event…'}</p>
      ) : d.status === 'succeeded' ? (
        <p className="ok">
          Delivered: {words}
          {last ? ` in ${last.duration_ms} ms` : ''}.
        </p>
      ) : (
        <p>
          <Status status={d.status} /> {d.status === 'paused' ? 'Paused: the endpoint is disabled.' : words ? `${words}.` : ''}
        </p>
      )}
      <Link to={`/applications/${applicationId}/deliveries/${deliveryId}`}>Open the test delivery</Link>
    </div>
  );
}
