import { useEffect, useState } from 'react';

/**
 * Copies `value` and says so beside the button. No clipboard on plain http (other than
 * localhost) nor in a frame not allowed clipboard-write (an embedded portal): then it says to
 * select the text instead, which every place using it shows in full.
 */
/** `small` beside an id in running text; `regular` among an action row's buttons. */
export function CopyButton({ value, what, size = 'small' }: { value: string; what: string; size?: 'small' | 'regular' }) {
  const [result, setResult] = useState<'copied' | 'refused' | null>(null);
  // The confirmation fades: a "Copied" left from an earlier click would mislead.
  useEffect(() => {
    if (!result) return;
    const timer = setTimeout(() => setResult(null), 2_500);
    return () => clearTimeout(timer);
  }, [result]);
  return (
    <span className="copy">
      <button
        type="button"
        className={size === 'small' ? 'button subtle small' : 'button subtle'}
        onClick={() => {
          if (!navigator.clipboard) return setResult('refused');
          navigator.clipboard.writeText(value).then(
            () => setResult('copied'),
            () => setResult('refused'),
          );
        }}
      >
        Copy<span className="visually-hidden"> {what}</span>
      </button>
      <span role="status" className={result === 'copied' ? 'ok small-text' : 'muted small-text'}>
        {result === 'copied' ? 'Copied.' : result === 'refused' ? 'Copying is blocked here: select the text and copy it.' : ''}
      </span>
    </span>
  );
}

/** An id or URL shown in full (wrapping, selectable) with its Copy button. */
export function CopyableCode({ value, what, className }: { value: string; what: string; className?: string }) {
  return (
    <span className={`copyable ${className ?? ''}`}>
      <code>{value}</code> <CopyButton value={value} what={what} />
    </span>
  );
}
