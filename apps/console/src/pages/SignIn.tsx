import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { clearSession, saveSession } from '../api/session';
import { ErrorMessage } from '../components/ErrorMessage';
import { probeRole, roleQueryKey, useSession } from '../session-context';

export function SignIn() {
  const { signIn } = useSession();
  const queryClient = useQueryClient();
  const { register, handleSubmit, formState } = useForm<{ key: string }>({ defaultValues: { key: '' } });
  const check = useMutation({
    mutationFn: async (key: string) => {
      // The probe sends the key from sessionStorage; forget it again if it is refused.
      saveSession({ kind: 'key', credential: key });
      try {
        return { key, role: await probeRole() };
      } catch (error) {
        clearSession();
        throw error;
      }
    },
    onSuccess: ({ key, role }) => {
      // The shell asks for the role again; it has the answer already.
      queryClient.setQueryData(roleQueryKey(key), role);
      signIn({ kind: 'key', credential: key });
    },
  });
  return (
    <main className="sign-in" id="main">
      <form className="card narrow" onSubmit={handleSubmit(({ key }) => check.mutate(key.trim()))} noValidate>
        <h1>Herald Console</h1>
        <p className="muted">Sign in with an API key. It stays in this tab only and is forgotten when you sign out or close it.</p>
        <div className="field">
          <label htmlFor="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={formState.errors.key ? true : undefined}
            aria-describedby={formState.errors.key ? 'api-key-error' : undefined}
            {...register('key', { validate: (v) => v.trim() !== '' || 'Enter an API key.' })}
          />
          {formState.errors.key && (
            <p className="field-error" id="api-key-error">
              {formState.errors.key.message}
            </p>
          )}
        </div>
        <ErrorMessage error={check.error} />
        <button type="submit" className="button primary" disabled={check.isPending}>
          Sign in
        </button>
      </form>
    </main>
  );
}
