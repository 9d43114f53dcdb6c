import { useForm } from 'react-hook-form';
import { useNavigate } from 'react-router';

/**
 * An account key has no route that lists its applications (the listing is an admin route), so
 * it opens one by its id; the API answers 403-03 for an application of another account.
 */
export function AccountHome() {
  const navigate = useNavigate();
  const { register, handleSubmit, formState } = useForm<{ id: string }>({ defaultValues: { id: '' } });
  return (
    <div className="stack">
      <h1>Applications</h1>
      <form className="card narrow" onSubmit={handleSubmit(({ id }) => navigate(`/applications/${id.trim()}/webhook`))} noValidate>
        <p className="muted">Open one of your account&apos;s applications by its id.</p>
        <div className="field">
          <label htmlFor="open-app">Application id</label>
          <input
            id="open-app"
            inputMode="numeric"
            aria-describedby={formState.errors.id ? 'open-app-error' : undefined}
            {...register('id', { validate: (v) => /^\d+$/.test(v.trim()) || 'An application id is a whole number.' })}
          />
          {formState.errors.id && (
            <p className="field-error" id="open-app-error">
              {formState.errors.id.message}
            </p>
          )}
        </div>
        <button type="submit" className="button primary">
          Open application
        </button>
      </form>
    </div>
  );
}
