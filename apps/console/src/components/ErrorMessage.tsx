import { HeraldApiError } from '@herald/client';

/** An API error as a person reads it: the message, and the code that the error directory explains. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof HeraldApiError ? error.code : null;
  return (
    <p className="error-banner" role="alert">
      {message}
      {code && <span className="code"> {code}</span>}
    </p>
  );
}
