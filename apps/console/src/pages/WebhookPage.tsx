import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { Controller, useForm, type FieldPath } from 'react-hook-form';
import { HeraldApiError, type Schemas } from '@herald/client';
import { api, call } from '../api/client';
import { webhookStatusKey } from '../api/queries';
import { ErrorMessage } from '../components/ErrorMessage';
import { LeaveGuard } from '../components/LeaveGuard';
import { HeaderEditor, rowsFromMap, rowsToMap, type HeaderRow } from '../components/HeaderEditor';
import { SchedulePreview } from '../components/SchedulePreview';
import { TestEvent } from '../components/TestEvent';
import { fieldErrors } from '../lib/field-errors';
import { useApplicationId } from './ApplicationLayout';

type BackoffType = Schemas['RetryConfigDto']['backoff_type'];

interface WebhookFormValues {
  url: string;
  retry_enabled: boolean;
  retry_config: { retry_value: number; max_retries: number; backoff_type: BackoffType; backoff_value: number };
  headers: HeaderRow[];
}

/** Every field the API may name in `details`, as the form names it. */
export const WEBHOOK_FIELDS = [
  'url',
  'retry_enabled',
  'retry_config.retry_value',
  'retry_config.max_retries',
  'retry_config.backoff_type',
  'retry_config.backoff_value',
  'retry_config',
  'headers',
] as const satisfies readonly FieldPath<WebhookFormValues>[];

const DEFAULTS: WebhookFormValues = {
  url: '',
  retry_enabled: true,
  retry_config: { retry_value: 30, max_retries: 5, backoff_type: 'multiplier', backoff_value: 2 },
  headers: [],
};

function toForm(config: Schemas['WebhookConfigDto']): WebhookFormValues {
  return {
    url: config.url,
    retry_enabled: config.retry_enabled === 1,
    retry_config: { ...config.retry_config },
    headers: rowsFromMap(config.headers),
  };
}

export function WebhookPage() {
  const id = useApplicationId();
  const webhook = useQuery({
    queryKey: ['webhook', id],
    queryFn: async () => {
      try {
        return (await call(api.GET('/application/{application_id}/webhook', { params: { path: { application_id: id } } }))).data;
      } catch (error) {
        if (error instanceof HeraldApiError && error.code === '404-02') return null;
        throw error;
      }
    },
  });
  // One object per stored configuration, not per render: the form resets only when what is
  // stored changes (a re-render or a click on the active tab used to reset it: issue 26 #5).
  const initial = useMemo(() => (webhook.data ? toForm(webhook.data) : webhook.data === null ? DEFAULTS : undefined), [webhook.data]);
  if (webhook.isPending || !initial)
    return (
      <p className="loading" role="status">
        Loading the webhook…
      </p>
    );
  if (webhook.isError) return <ErrorMessage error={webhook.error} />;
  return <WebhookForm key={id} applicationId={id} initial={initial} exists={webhook.data !== null} />;
}

function WebhookForm({ applicationId, initial, exists }: { applicationId: number; initial: WebhookFormValues; exists: boolean }) {
  const queryClient = useQueryClient();
  const [otherErrors, setOtherErrors] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);
  const { register, handleSubmit, control, watch, setError, clearErrors, formState, reset } = useForm<WebhookFormValues>({
    defaultValues: initial,
  });
  // A newer stored configuration (saved here, or elsewhere and refetched) updates the untouched
  // fields; what the user is editing stays as typed.
  useEffect(() => reset(initial, { keepDirtyValues: true }), [initial, reset]);
  const save = useMutation({
    mutationFn: (values: WebhookFormValues) => {
      const body: Schemas['UpsertWebhookRequest'] = {
        url: values.url.trim(),
        retry_enabled: values.retry_enabled ? 1 : 0,
        retry_config: values.retry_config,
        headers: rowsToMap(values.headers).map,
      };
      return call(api.PUT('/application/{application_id}/webhook', { params: { path: { application_id: applicationId } }, body }));
    },
    onMutate: () => {
      clearErrors();
      setOtherErrors([]);
      setSaved(false);
    },
    onSuccess: (res) => {
      setSaved(true);
      // What was typed is now what is stored: nothing left to lose.
      reset(toForm(res.data));
      queryClient.setQueryData(['webhook', applicationId], res.data);
      void queryClient.invalidateQueries({ queryKey: webhookStatusKey(applicationId) });
      void queryClient.invalidateQueries({ queryKey: ['subscriptions', applicationId] });
    },
    onError: (error) => {
      if (!(error instanceof HeraldApiError) || error.details.length === 0) return;
      const { byField, other } = fieldErrors(error.details, WEBHOOK_FIELDS);
      for (const [field, message] of Object.entries(byField)) setError(field as (typeof WEBHOOK_FIELDS)[number], { type: 'api', message });
      setOtherErrors(other);
    },
  });
  // Editing again retires the last save's message or error: an old banner must not stay.
  const { reset: resetSave } = save;
  useEffect(() => {
    const subscription = watch((_, { type }) => {
      if (type !== 'change') return;
      setSaved(false);
      setOtherErrors([]);
      resetSave();
    });
    return () => subscription.unsubscribe();
  }, [watch, resetSave]);
  const retryEnabled = watch('retry_enabled');
  const retry = watch('retry_config');
  const errors = formState.errors;
  const errorOf = (field: (typeof WEBHOOK_FIELDS)[number]): string | undefined => {
    const parts = field.split('.');
    let node: unknown = errors;
    for (const part of parts) node = (node as Record<string, unknown> | undefined)?.[part];
    return (node as { message?: string } | undefined)?.message;
  };
  const numberField = (field: 'retry_value' | 'max_retries' | 'backoff_value', label: string, hint: string) => {
    const name = `retry_config.${field}` as const;
    const error = errorOf(name);
    const inputId = `webhook-${field}`;
    return (
      <div className="field">
        <label htmlFor={inputId}>{label}</label>
        <input
          id={inputId}
          type="number"
          inputMode="numeric"
          disabled={!retryEnabled}
          aria-invalid={error ? true : undefined}
          aria-describedby={`${inputId}-hint${error ? ` ${inputId}-error` : ''}`}
          {...register(name, { valueAsNumber: true })}
        />
        <p className="hint" id={`${inputId}-hint`}>
          {hint}
        </p>
        {error && (
          <p className="field-error" id={`${inputId}-error`}>
            {error}
          </p>
        )}
      </div>
    );
  };
  const urlError = errorOf('url');
  const backoffHint =
    retry.backoff_type === 'multiplier'
      ? 'Factor, 1 to 10.'
      : retry.backoff_type === 'linear'
        ? 'Seconds added per retry.'
        : 'Ignored for fixed.';
  return (
    <div className="webhook-layout">
      {/* Mounted only while there is something to lose: a blocker in place warns on every hash change. */}
      {formState.isDirty && !save.isPending && <LeaveGuard what="the webhook" />}
      <form className="card" onSubmit={handleSubmit((v) => save.mutate(v))} noValidate aria-labelledby="webhook-heading">
        <h2 id="webhook-heading">{exists ? 'Webhook' : 'Configure the webhook'}</h2>
        <div className="field">
          <label htmlFor="webhook-url">Target URL</label>
          <input
            id="webhook-url"
            type="url"
            placeholder="https://example.com/hooks/herald"
            spellCheck={false}
            aria-invalid={urlError ? true : undefined}
            aria-describedby={urlError ? 'webhook-url-error' : undefined}
            {...register('url')}
          />
          {urlError && (
            <p className="field-error" id="webhook-url-error">
              {urlError}
            </p>
          )}
        </div>
        <div className="field checkbox">
          <input id="webhook-retries" type="checkbox" {...register('retry_enabled')} />
          <label htmlFor="webhook-retries">Retry failed deliveries</label>
          {errorOf('retry_enabled') && <p className="field-error">{errorOf('retry_enabled')}</p>}
        </div>
        <fieldset className="retry-fields" disabled={!retryEnabled}>
          <legend>Retry policy</legend>
          {errorOf('retry_config') && <p className="field-error">{errorOf('retry_config')}</p>}
          {numberField('retry_value', 'First retry after (seconds)', '1 to 86400.')}
          {numberField('max_retries', 'Maximum retries', '0 to 25.')}
          <div className="field">
            <label htmlFor="webhook-backoff_type">Backoff</label>
            <select id="webhook-backoff_type" {...register('retry_config.backoff_type')}>
              <option value="multiplier">multiplier</option>
              <option value="linear">linear</option>
              <option value="fixed">fixed</option>
            </select>
            {errorOf('retry_config.backoff_type') && <p className="field-error">{errorOf('retry_config.backoff_type')}</p>}
          </div>
          {numberField('backoff_value', 'Backoff value', backoffHint)}
        </fieldset>
        <Controller
          control={control}
          name="headers"
          render={({ field }) => <HeaderEditor rows={field.value} onChange={field.onChange} error={errorOf('headers')} />}
        />
        {otherErrors.map((message) => (
          <p className="field-error" key={message}>
            {message}
          </p>
        ))}
        {save.error && !(save.error instanceof HeraldApiError && save.error.details.length > 0) && <ErrorMessage error={save.error} />}
        {save.error instanceof HeraldApiError && save.error.details.length > 0 && (
          <p className="error-banner" role="alert">
            {save.error.message} <span className="code">{save.error.code}</span>
          </p>
        )}
        <div className="actions">
          <button type="submit" className="button primary" disabled={save.isPending}>
            Save webhook
          </button>
          {saved && (
            <span className="ok" role="status">
              Saved.
            </span>
          )}
        </div>
      </form>
      <div className="side-column">
        <SchedulePreview
          retry_enabled={retryEnabled}
          retry_value={retry.retry_value}
          max_retries={retry.max_retries}
          backoff_type={retry.backoff_type}
          backoff_value={retry.backoff_value}
        />
        {/* What a user who has just saved looks for next (issue 24 #5): the test, and its outcome, here. */}
        {exists && (
          <TestEvent
            applicationId={applicationId}
            note={formState.isDirty ? 'Goes to the saved target: save your changes first.' : undefined}
          />
        )}
      </div>
    </div>
  );
}
