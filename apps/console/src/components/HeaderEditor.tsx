import { useId } from 'react';

export interface HeaderRow {
  name: string;
  value: string;
}

export function rowsFromMap(map: Record<string, string>): HeaderRow[] {
  return Object.entries(map).map(([name, value]) => ({ name, value }));
}

/**
 * The map the API stores. Rows with neither a name nor a value are ignored; a name given twice
 * (HTTP names are case-insensitive) is reported rather than silently keeping one of them.
 */
export function rowsToMap(rows: readonly HeaderRow[]): { map: Record<string, string>; duplicates: string[] } {
  const map: Record<string, string> = {};
  const seen = new Map<string, string>();
  const duplicates: string[] = [];
  for (const row of rows) {
    const name = row.name.trim();
    if (name === '' && row.value === '') continue;
    const lower = name.toLowerCase();
    if (seen.has(lower)) duplicates.push(name);
    seen.set(lower, name);
    // Object.defineProperty: `__proto__` or `constructor` are ordinary header names here.
    Object.defineProperty(map, name, { value: row.value, enumerable: true, writable: true, configurable: true });
  }
  return { map, duplicates };
}

interface Props {
  rows: HeaderRow[];
  onChange(rows: HeaderRow[]): void;
  error?: string;
}

/** Name/value rows for the webhook's extra headers. */
export function HeaderEditor({ rows, onChange, error }: Props) {
  const id = useId();
  const { duplicates } = rowsToMap(rows);
  const update = (index: number, patch: Partial<HeaderRow>) => onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  const message = error ?? (duplicates.length ? `Header given twice: ${duplicates.join(', ')}` : undefined);
  return (
    <fieldset className="headers" aria-describedby={message ? `${id}-error` : undefined}>
      <legend>Extra headers</legend>
      {rows.length === 0 && <p className="muted">No extra headers.</p>}
      {rows.map((row, index) => (
        <div className="header-row" key={index}>
          <label>
            <span className="visually-hidden">Header {index + 1} name</span>
            <input
              value={row.name}
              placeholder="X-Api-Token"
              onChange={(e) => update(index, { name: e.target.value })}
              spellCheck={false}
            />
          </label>
          <label>
            <span className="visually-hidden">Header {index + 1} value</span>
            <input value={row.value} placeholder="value" onChange={(e) => update(index, { value: e.target.value })} spellCheck={false} />
          </label>
          <button
            type="button"
            className="button subtle"
            aria-label={`Remove header ${index + 1}`}
            onClick={() => onChange(rows.filter((_, i) => i !== index))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="button subtle" onClick={() => onChange([...rows, { name: '', value: '' }])}>
        Add header
      </button>
      {message && (
        <p className="field-error" id={`${id}-error`} role="alert">
          {message}
        </p>
      )}
    </fieldset>
  );
}
