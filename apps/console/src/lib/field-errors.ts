import type { ErrorDetail } from '@herald/client';

/**
 * Turns the API's `details` into errors by form field. Fields are named as the API names them
 * (`url`, `retry_config.max_retries`); anything under `headers` (`headers.X-Token`, `headers`)
 * belongs to the header editor; details that match no field of the form are kept for the form's
 * top so nothing the API said is lost.
 */
export function fieldErrors(
  details: readonly ErrorDetail[],
  fields: readonly string[],
): { byField: Record<string, string>; other: string[] } {
  const byField: Record<string, string> = {};
  const other: string[] = [];
  for (const detail of details) {
    const field = fields.includes(detail.field)
      ? detail.field
      : fields.find((candidate) => detail.field.startsWith(`${candidate}.`) || detail.field.startsWith(`${candidate}[`));
    if (field === undefined) other.push(detail.field ? `${detail.field}: ${detail.message}` : detail.message);
    else if (byField[field] === undefined) byField[field] = detail.message;
    else byField[field] += ` ${detail.message}`;
  }
  return { byField, other };
}
