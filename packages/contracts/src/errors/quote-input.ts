const MAX_QUOTED_CHARACTERS = 64;

/**
 * A client's value as an error message may show it: JSON-quoted, so control characters are
 * escapes rather than raw bytes in a log line or a terminal, and cut short, so an answer never
 * echoes back kilobytes of whatever was sent.
 */
export function quoteInput(value: string): string {
  const shown = value.length > MAX_QUOTED_CHARACTERS ? `${value.slice(0, MAX_QUOTED_CHARACTERS)}…` : value;
  return JSON.stringify(shown);
}
