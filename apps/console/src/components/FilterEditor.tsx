import { checkFilter } from '@herald/core/src/filters/subscription-filter';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { HeraldApiError, type Schemas } from '@herald/client';
import { api, call } from '../api/client';
import { ConfirmButton, confirmMutation } from './ConfirmButton';
import { ErrorMessage } from './ErrorMessage';

type Filter = Record<string, unknown>;

const PLACEHOLDER = '{ "queue.id": { "$in": ["q-sales", "q-support"] }, "priority": { "$gte": 3 } }';

export const filterQueryKey = (applicationId: number, event: string) => ['subscription-filter', applicationId, event];

/** The filter written in the box, as the API will judge it: the object, or what is wrong (each place as the API names it). */
function readFilter(text: string): { filter: Filter | null; problems: string[] } {
  if (text.trim() === '') return { filter: null, problems: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { filter: null, problems: [`Not JSON: ${(error as Error).message}`] };
  }
  const checked = checkFilter(value);
  if (!checked.ok)
    return { filter: null, problems: checked.problems.map(({ path, message }) => `${path ? `filter.${path}` : 'filter'} ${message}`) };
  return { filter: value as Filter, problems: [] };
}

function asText(filter: Filter | null | undefined): string {
  return filter ? JSON.stringify(filter, null, 2) : '';
}

/**
 * A subscription's payload filter (PRODUCT.md §14): written as JSON, checked as it is typed (the
 * same rules the API applies, from core), tried on the latest events before saving, saved or
 * removed. What is typed is kept while the stored filter is refetched.
 */
export function FilterEditor({ applicationId, event, onClose }: { applicationId: number; event: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { application_id: applicationId, subscription: event } } };
  const stored = useQuery({
    queryKey: filterQueryKey(applicationId, event),
    queryFn: () => call(api.GET('/application/{application_id}/webhook/subscription/{subscription}/filter', path)),
  });
  const [text, setText] = useState<string | null>(null);
  const [tested, setTested] = useState<{ result: Schemas['SubscriptionFilterTestDto']; of: string } | null>(null);
  // The box starts from the stored filter, once; later refetches never overwrite an edit.
  useEffect(() => {
    if (text === null && stored.data) setText(asText(stored.data.data.filter));
  }, [stored.data, text]);
  const shown = text ?? '';
  const { filter, problems } = readFilter(shown);
  const savedText = asText(stored.data?.data.filter);
  const changed = text !== null && shown.trim() !== savedText.trim();

  const saved = (res: Schemas['SubscriptionFilterResponse']) => {
    queryClient.setQueryData(filterQueryKey(applicationId, event), res);
    setText(asText(res.data.filter));
  };
  const save = useMutation({
    mutationFn: (value: Filter) =>
      call(api.PUT('/application/{application_id}/webhook/subscription/{subscription}/filter', { ...path, body: { filter: value } })),
    onSuccess: saved,
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/application/{application_id}/webhook/subscription/{subscription}/filter', path)),
    onSuccess: (res) => {
      saved(res);
      setTested(null);
    },
  });
  const test = useMutation({
    mutationFn: (value: Filter | null) =>
      call(
        api.POST('/application/{application_id}/webhook/subscription/{subscription}/filter/test', {
          ...path,
          body: value ? { filter: value } : {},
        }),
      ),
    onSuccess: (res, value) => setTested({ result: res.data, of: value ? JSON.stringify(value) : '' }),
  });
  const apiError = save.error ?? test.error ?? remove.error;
  const apiDetails = apiError instanceof HeraldApiError ? apiError.details : [];
  const headingId = `filter-heading-${event}`;
  const problemsId = `filter-problems-${event}`;

  return (
    <section className="filter-editor" aria-labelledby={headingId}>
      <div className="filter-editor-head">
        <h3 id={headingId}>
          Filter of <code>{event}</code>
        </h3>
        <button type="button" className="button subtle small" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="hint">
        Only events whose payload matches are delivered; the others are still stored and listed. MongoDB query operators on the payload:
        keys are dotted paths (<code>queue.id</code>, <code>tags.0</code>) or <code>$and</code>, <code>$or</code>, <code>$not</code>; a
        value is a literal or an object of <code>$eq $ne $in $nin $gt $gte $lt $lte $exists</code>. Empty: every event.
      </p>
      <ErrorMessage error={stored.error} />
      <div className="field">
        <label htmlFor={`filter-${event}`}>Filter (JSON)</label>
        <textarea
          id={`filter-${event}`}
          className="code-input"
          rows={Math.min(14, Math.max(4, shown.split('\n').length + 1))}
          spellCheck={false}
          placeholder={PLACEHOLDER}
          value={shown}
          disabled={!stored.data}
          aria-invalid={problems.length > 0 || apiDetails.length > 0 ? true : undefined}
          aria-describedby={problems.length > 0 || apiDetails.length > 0 ? problemsId : undefined}
          onChange={(e) => {
            setText(e.target.value);
            setTested(null);
          }}
        />
        {(problems.length > 0 || apiDetails.length > 0) && (
          <ul className="field-error filter-problems" id={problemsId} aria-label="Problems in the filter">
            {(problems.length > 0 ? problems : apiDetails.map((detail) => `${detail.field} ${detail.message}`)).map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        )}
      </div>
      {apiError && apiDetails.length === 0 && <ErrorMessage error={apiError} />}
      <div className="actions">
        <button
          type="button"
          className="button"
          disabled={!stored.data || problems.length > 0 || test.isPending}
          onClick={() => test.mutate(filter)}
        >
          Test filter
        </button>
        <button
          type="button"
          className="button primary"
          disabled={!filter || !changed || problems.length > 0 || save.isPending}
          onClick={() => filter && save.mutate(filter)}
        >
          Save filter
        </button>
        {stored.data?.data.filter && (
          <ConfirmButton
            className="button subtle danger"
            label={`of ${event}`}
            title={`Remove the filter of ${event}?`}
            body={<p>Every {event} event is delivered again, from the next one published.</p>}
            confirm="Remove filter"
            {...confirmMutation(remove, undefined)}
          >
            Remove filter
          </ConfirmButton>
        )}
        <span className="muted" aria-live="polite">
          {stored.data &&
            (stored.data.data.filter ? (changed ? 'Unsaved changes' : 'Saved') : changed ? 'Unsaved' : 'No filter: every event')}
        </span>
      </div>
      {tested && (
        <div className="filter-test" role="status" aria-label="Filter test result">
          <p>
            {tested.result.tested === 0 ? (
              <>No {event} events yet to test on.</>
            ) : (
              <>
                <strong>
                  {tested.result.matched} of {tested.result.tested}
                </strong>{' '}
                latest {event} events match{tested.of === '' && !stored.data?.data.filter ? ' (no filter: every event)' : ''}.
              </>
            )}
          </p>
          {tested.result.matched_ids.length > 0 && (
            <ul className="filter-matches" aria-label="Matching events">
              {tested.result.matched_ids.map((eventId) => (
                <li key={eventId}>
                  <Link to={`/applications/${applicationId}/events/${eventId}`}>
                    <code>{eventId}</code>
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
