import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, ApiError, call } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { formatTime } from '../components/Status';
import { useApplicationId } from './ApplicationLayout';

export function EndpointPage() {
  const id = useApplicationId();
  return (
    <div className="columns">
      <TestEvent applicationId={id} />
      <Health applicationId={id} />
      <Throttle applicationId={id} />
      <Secret applicationId={id} />
    </div>
  );
}

function TestEvent({ applicationId }: { applicationId: number }) {
  const send = useMutation({
    mutationFn: () => call(api.POST('/application/{application_id}/webhook/test', { params: { path: { application_id: applicationId } } })),
  });
  const delivery = send.data?.data.deliveries[0];
  return (
    <section className="card" aria-labelledby="test-heading">
      <h2 id="test-heading">Test event</h2>
      <p className="muted">Sends a webhook.test event to the target, whether or not it is subscribed.</p>
      <button type="button" className="button primary" disabled={send.isPending} onClick={() => send.mutate()}>
        Send test event
      </button>
      <ErrorMessage error={send.error} />
      {send.data && (
        <p className="ok" role="status">
          Sent <code>{send.data.data.id}</code>.{' '}
          {delivery && <Link to={`/applications/${applicationId}/deliveries/${delivery}`}>Follow its delivery</Link>}
        </p>
      )}
    </section>
  );
}

function Health({ applicationId }: { applicationId: number }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { application_id: applicationId } } };
  const status = useQuery({
    queryKey: ['webhook-status', applicationId],
    queryFn: () => call(api.GET('/application/{application_id}/webhook/status', path)),
    refetchInterval: 10_000,
  });
  const toggle = useMutation({
    mutationFn: (enable: boolean) =>
      call(
        enable
          ? api.POST('/application/{application_id}/webhook/enable', path)
          : api.POST('/application/{application_id}/webhook/disable', path),
      ),
    onSuccess: (res) => queryClient.setQueryData(['webhook-status', applicationId], res),
  });
  if (status.error instanceof ApiError && status.error.code === '404-02') return null;
  const s = status.data?.data;
  return (
    <section className="card" aria-labelledby="health-heading">
      <h2 id="health-heading">Endpoint health</h2>
      <ErrorMessage error={status.error ?? toggle.error} />
      {s && (
        <>
          <p>
            State: <span className={`status status-${s.state === 'active' ? 'succeeded' : 'paused'}`}>{s.state}</span>
            {s.disabled_reason && <span className="muted"> ({s.disabled_reason})</span>}
          </p>
          <dl className="facts">
            <dt>Last success</dt>
            <dd>{formatTime(s.last_success_at)}</dd>
            <dt>Failing since</dt>
            <dd>{formatTime(s.failing_since)}</dd>
            <dt>Failures in a row</dt>
            <dd>{s.consecutive_failures}</dd>
          </dl>
          {s.state === 'active' ? (
            <button type="button" className="button subtle danger" onClick={() => toggle.mutate(false)}>
              Disable endpoint
            </button>
          ) : (
            <button type="button" className="button" onClick={() => toggle.mutate(true)}>
              Enable endpoint
            </button>
          )}
        </>
      )}
    </section>
  );
}

/** PRODUCT.md §10: at most `per_second` attempts a second reach the endpoint, across every worker. */
function Throttle({ applicationId }: { applicationId: number }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { application_id: applicationId } } };
  const throttle = useQuery({
    queryKey: ['webhook-throttle', applicationId],
    queryFn: () => call(api.GET('/application/{application_id}/webhook/throttle', path)),
  });
  const [draft, setDraft] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (perSecond: number | null) =>
      call(api.PUT('/application/{application_id}/webhook/throttle', { ...path, body: { per_second: perSecond } })),
    onSuccess: (res) => {
      queryClient.setQueryData(['webhook-throttle', applicationId], res);
      setDraft(null);
    },
  });
  if (throttle.error instanceof ApiError && throttle.error.code === '404-02') return null;
  const current = throttle.data?.data.per_second;
  const shown = draft ?? (current == null ? '' : String(current));
  return (
    <section className="card" aria-labelledby="throttle-heading">
      <h2 id="throttle-heading">Rate limit</h2>
      <p className="muted">
        {current == null
          ? 'No limit: attempts go out as fast as the workers send them.'
          : `At most ${current} attempts a second reach the endpoint.`}{' '}
        Deliveries over the limit wait their turn; none fail because of it.
      </p>
      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate(shown.trim() === '' ? null : Number(shown));
        }}
      >
        <label htmlFor="throttle-per-second">Attempts per second</label>
        <input
          id="throttle-per-second"
          type="number"
          min={1}
          max={10000}
          step={1}
          placeholder="no limit"
          value={shown}
          aria-invalid={save.error ? true : undefined}
          aria-describedby="throttle-help"
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit" className="button" disabled={save.isPending || throttle.isPending}>
          Save rate limit
        </button>
      </form>
      <p id="throttle-help" className="muted">
        1 to 10,000; leave empty for no limit.
      </p>
      <ErrorMessage error={throttle.error ?? save.error} />
      {save.isSuccess && (
        <p className="ok" role="status">
          Saved.
        </p>
      )}
    </section>
  );
}

function Secret({ applicationId }: { applicationId: number }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { application_id: applicationId } } };
  const [revealed, setRevealed] = useState(false);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const secret = useQuery({
    queryKey: ['secret', applicationId],
    queryFn: () => call(api.GET('/application/{application_id}/webhook/secret', path)),
    enabled: revealed,
  });
  const rotate = useMutation({
    mutationFn: () => call(api.POST('/application/{application_id}/webhook/secret/rotate', path)),
    onSuccess: (res) => {
      queryClient.setQueryData(['secret', applicationId], res);
      setRevealed(true);
      dialog.current?.close();
    },
  });
  const value = secret.data?.data.secret;
  return (
    <section className="card" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      <p className="muted">
        Receivers verify the webhook-signature header with it. After a rotation the previous secret still signs for 24 hours.
      </p>
      <ErrorMessage error={secret.error} />
      <p>
        <code className="secret" aria-label="Signing secret">
          {revealed && value ? value : 'whsec_••••••••••••••••'}
        </code>
      </p>
      <div className="actions">
        <button type="button" className="button subtle" onClick={() => setRevealed((r) => !r)}>
          {revealed ? 'Hide secret' : 'Reveal secret'}
        </button>
        <button
          type="button"
          className="button subtle"
          disabled={!revealed || !value}
          onClick={() => {
            // No clipboard on plain http (other than localhost), and none in a frame not allowed
            // clipboard-write (an embedded portal): say so, the revealed secret can still be selected.
            if (!value) return;
            if (!navigator.clipboard) return setCopied('no');
            navigator.clipboard.writeText(value).then(
              () => setCopied('yes'),
              () => setCopied('no'),
            );
          }}
        >
          Copy secret
        </button>
        <button type="button" className="button danger" onClick={() => dialog.current?.showModal()}>
          Rotate secret
        </button>
        {copied && (
          <span className={copied === 'yes' ? 'ok' : 'muted'} role="status">
            {copied === 'yes' ? 'Copied.' : 'This browser does not allow copying here: select the secret and copy it.'}
          </span>
        )}
        {rotate.isSuccess && (
          <span className="ok" role="status">
            Rotated.
          </span>
        )}
      </div>
      <dialog ref={dialog} aria-labelledby="rotate-heading" className="confirm">
        <h3 id="rotate-heading">Rotate the signing secret?</h3>
        <p>A new secret signs from now on; the current one keeps signing for 24 hours so receivers can switch over.</p>
        {/* Inside the dialog: behind a modal dialog an error would go unseen. */}
        <ErrorMessage error={rotate.error} />
        <div className="actions">
          <button type="button" className="button danger" disabled={rotate.isPending} onClick={() => rotate.mutate()}>
            Yes, rotate
          </button>
          {/* The safe choice has the focus when the dialog opens. */}
          <button type="button" className="button subtle" autoFocus onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </section>
  );
}
