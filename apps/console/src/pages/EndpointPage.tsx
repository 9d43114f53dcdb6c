import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { HeraldApiError } from '@herald/client';
import { api, call } from '../api/client';
import { countsKey, plural, useDeliveryCounts, useWebhookStatus, webhookStatusKey } from '../api/queries';
import { ConfirmButton } from '../components/ConfirmButton';
import { CopyButton } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { Time } from '../components/Time';
import { useApplicationId } from './ApplicationLayout';
import { TestEvent } from '../components/TestEvent';

export function EndpointPage() {
  const id = useApplicationId();
  const status = useWebhookStatus(id);
  if (status.isPending)
    return (
      <p className="loading" role="status">
        Loading…
      </p>
    );
  // Without a webhook every action here would fail with 404-02 (issue 26 #11): say what to do instead.
  if (status.data === null) {
    return (
      <section className="card" aria-labelledby="no-webhook-heading">
        <h2 id="no-webhook-heading">No webhook yet</h2>
        <p>The test event, the endpoint's health, its rate limit and its signing secret all belong to the webhook.</p>
        <Link className="button primary" to={`/applications/${id}/webhook`}>
          Configure the webhook
        </Link>
      </section>
    );
  }
  return (
    <div className="columns endpoint-grid">
      <TestEvent applicationId={id} />
      <Health applicationId={id} />
      <Throttle applicationId={id} />
      <Secret applicationId={id} />
    </div>
  );
}

function Health({ applicationId }: { applicationId: number }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { application_id: applicationId } } };
  const status = useWebhookStatus(applicationId, { poll: true });
  const counts = useDeliveryCounts(applicationId);
  const toggle = useMutation({
    mutationFn: (enable: boolean) =>
      call(
        enable
          ? api.POST('/application/{application_id}/webhook/enable', path)
          : api.POST('/application/{application_id}/webhook/disable', path),
      ),
    onSuccess: (res) => {
      queryClient.setQueryData(webhookStatusKey(applicationId), res.data);
      void queryClient.invalidateQueries({ queryKey: countsKey(applicationId) });
    },
  });
  const s = status.data;
  const waiting = counts.data ? counts.data.pending : undefined;
  return (
    <section className="card" aria-labelledby="health-heading">
      <h2 id="health-heading">Endpoint health</h2>
      <ErrorMessage error={status.error} />
      {s && (
        <>
          <p>
            State: <span className={`status status-${s.state === 'active' ? 'succeeded' : 'paused'}`}>{s.state}</span>
            {s.state === 'active' && s.consecutive_failures > 0 && <span className="status status-failed">failing</span>}
          </p>
          <dl className="facts">
            <dt>Last success</dt>
            <dd>
              <Time iso={s.last_success_at} empty="never" />
            </dd>
            <dt>Failing since</dt>
            <dd>
              <Time iso={s.failing_since} empty="not failing" />
            </dd>
            <dt>Failures in a row</dt>
            <dd>{s.consecutive_failures}</dd>
          </dl>
          {s.state === 'active' ? (
            <ConfirmButton
              title="Disable the endpoint?"
              body={
                <p>
                  Herald stops sending to this webhook.{' '}
                  {waiting === undefined
                    ? 'Waiting deliveries'
                    : waiting === 0
                      ? 'New deliveries'
                      : `${plural(waiting, 'waiting delivery', 'waiting deliveries')} and new ones`}{' '}
                  are paused — kept, not dropped — until you enable it again.
                </p>
              }
              confirm="Disable endpoint"
              onConfirm={() => toggle.mutateAsync(false)}
              pending={toggle.isPending}
              error={toggle.error}
            >
              Disable endpoint
            </ConfirmButton>
          ) : (
            <button type="button" className="button primary" disabled={toggle.isPending} onClick={() => toggle.mutate(true)}>
              Enable endpoint
            </button>
          )}
          {s.state !== 'active' && <ErrorMessage error={toggle.error} />}
        </>
      )}
    </section>
  );
}

/**
 * The endpoint's limits, across every worker: at most `per_second` attempts a second (PRODUCT.md
 * §10) and at most `max_in_flight` at once (§17; empty: the operator's default).
 */
function Throttle({ applicationId }: { applicationId: number }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { application_id: applicationId } } };
  const throttle = useQuery({
    queryKey: ['webhook-throttle', applicationId],
    queryFn: () => call(api.GET('/application/{application_id}/webhook/throttle', path)),
  });
  const [perSecondDraft, setPerSecondDraft] = useState<string | null>(null);
  const [inFlightDraft, setInFlightDraft] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (limits: { per_second: number | null; max_in_flight: number | null }) =>
      call(api.PUT('/application/{application_id}/webhook/throttle', { ...path, body: limits })),
    onSuccess: (res) => {
      queryClient.setQueryData(['webhook-throttle', applicationId], res);
      setPerSecondDraft(null);
      setInFlightDraft(null);
    },
  });
  if (throttle.error instanceof HeraldApiError && throttle.error.code === '404-02') return null;
  const perSecond = throttle.data?.data.per_second;
  const inFlight = throttle.data?.data.max_in_flight;
  const shownPerSecond = perSecondDraft ?? (perSecond == null ? '' : String(perSecond));
  const shownInFlight = inFlightDraft ?? (inFlight == null ? '' : String(inFlight));
  const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));
  return (
    <section className="card" aria-labelledby="throttle-heading">
      <h2 id="throttle-heading">Limits</h2>
      <p className="muted">
        {perSecond == null
          ? 'No rate limit: attempts go out as fast as the workers send them.'
          : `At most ${perSecond} attempts a second reach the endpoint.`}{' '}
        {inFlight == null
          ? 'At most the operator’s default number of attempts are in flight at once.'
          : `At most ${inFlight} attempts are in flight at once.`}{' '}
        Deliveries over a limit wait their turn; none fail because of it.
      </p>
      <form
        className="limits-form"
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({ per_second: numberOrNull(shownPerSecond), max_in_flight: numberOrNull(shownInFlight) });
        }}
      >
        <div className="field">
          <label htmlFor="throttle-per-second">Attempts per second</label>
          <input
            id="throttle-per-second"
            type="number"
            min={1}
            max={10000}
            step={1}
            placeholder="no limit"
            value={shownPerSecond}
            aria-invalid={save.error ? true : undefined}
            aria-describedby="throttle-help"
            onChange={(event) => setPerSecondDraft(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="throttle-max-in-flight">Attempts in flight at once</label>
          <input
            id="throttle-max-in-flight"
            type="number"
            min={1}
            max={1000}
            step={1}
            placeholder="default"
            value={shownInFlight}
            aria-invalid={save.error ? true : undefined}
            aria-describedby="throttle-help"
            onChange={(event) => setInFlightDraft(event.target.value)}
          />
        </div>
        <button type="submit" className="button" disabled={save.isPending || throttle.isPending}>
          Save limits
        </button>
      </form>
      <p id="throttle-help" className="muted">
        Per second: 1 to 10,000, empty for no limit. In flight: 1 to 1,000, empty for the default.
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
  const dialog = useRef<HTMLDialogElement>(null);
  const cancelRotate = useRef<HTMLButtonElement>(null);
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
        {revealed && value && <CopyButton value={value} what="signing secret" size="regular" />}
        <button
          type="button"
          className="button danger"
          onClick={() => {
            dialog.current?.showModal();
            cancelRotate.current?.focus();
          }}
        >
          Rotate secret
        </button>
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
          <button ref={cancelRotate} type="button" className="button subtle" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </section>
  );
}
