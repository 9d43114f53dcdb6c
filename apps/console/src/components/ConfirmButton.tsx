import { useRef, type ReactNode } from 'react';
import { ErrorMessage } from './ErrorMessage';

interface Props {
  /** The button's visible text; `label` adds what it acts on for assistive technology. */
  children: ReactNode;
  label?: string;
  /** The dialog's question, e.g. "Revoke the key production?" */
  title: string;
  /** What will happen, and to how many. */
  body: ReactNode;
  confirm: string;
  onConfirm(): Promise<unknown>;
  className?: string;
  disabled?: boolean;
  error?: unknown;
  pending?: boolean;
  /** 'danger' (red) for what removes or stops something; 'primary' for what only sends again. */
  tone?: 'danger' | 'primary';
}

/**
 * A destructive or far-reaching action behind a modal dialog that names what will happen
 * (issue 26 #6): the dialog's safe choice has the focus, the action's error shows inside it, and
 * it closes only once the action has succeeded.
 */
export function ConfirmButton({
  children,
  label,
  title,
  body,
  confirm,
  onConfirm,
  className,
  disabled,
  error,
  pending,
  tone = 'danger',
}: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  return (
    <>
      <button
        type="button"
        className={className ?? 'button subtle danger'}
        disabled={disabled}
        onClick={() => {
          dialog.current?.showModal();
          // The safe choice has the focus (set here: React's autoFocus would take it when the page renders).
          cancel.current?.focus();
        }}
      >
        {children}
        {label && <span className="visually-hidden"> {label}</span>}
      </button>
      <dialog ref={dialog} className="confirm" aria-label={title}>
        <h3>{title}</h3>
        <div className="confirm-body">{body}</div>
        <ErrorMessage error={error} />
        <div className="actions">
          <button
            type="button"
            className={tone === 'danger' ? 'button danger' : 'button primary'}
            disabled={pending}
            onClick={() => {
              onConfirm().then(
                () => dialog.current?.close(),
                // The error is shown inside the dialog through `error`; it stays open.
                () => undefined,
              );
            }}
          >
            {confirm}
          </button>
          <button ref={cancel} type="button" className="button subtle" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

/**
 * ConfirmButton's onConfirm, pending and error for a mutation run on one item of a list: the
 * error shows only in the dialog of the item it failed for.
 */
export function confirmMutation<V>(
  mutation: { mutateAsync(item: V): Promise<unknown>; isPending: boolean; variables: V | undefined; error: unknown },
  item: V,
): Pick<Props, 'onConfirm' | 'pending' | 'error'> {
  return {
    onConfirm: () => mutation.mutateAsync(item),
    pending: mutation.isPending,
    error: mutation.variables === item ? mutation.error : null,
  };
}
