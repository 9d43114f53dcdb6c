/** JSON pretty-printed (two-space indent) in a block that wraps; text that is not JSON as it came. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre className="code-block" aria-label={label} tabIndex={0}>
      {typeof value === 'string' ? prettyIfJson(value) : JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function prettyIfJson(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    // A truncated excerpt (the first 4 KiB) is often not valid JSON: show it as received.
    return text;
  }
}
