import { useEffect, useRef } from 'react';
import { useBlocker } from 'react-router';

/**
 * Asks before unsaved edits are left behind (issue 26 #5); render it while a form is dirty. A route change inside the console
 * opens a dialog; closing or reloading the tab gets the browser's own prompt. Moving within the
 * same page (the active tab clicked again, a search parameter) is not leaving.
 */
export function LeaveGuard({ what }: { what: string }) {
  const blocker = useBlocker(({ currentLocation, nextLocation }) => currentLocation.pathname !== nextLocation.pathname);
  const dialog = useRef<HTMLDialogElement>(null);
  const stay = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (blocker.state === 'blocked' && !dialog.current?.open) {
      dialog.current?.showModal();
      // Staying is the safe choice. Not autoFocus: that would take the focus from the form as soon as it is dirty.
      stay.current?.focus();
    }
    if (blocker.state !== 'blocked' && dialog.current?.open) dialog.current.close();
  }, [blocker.state]);
  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, []);
  return (
    <dialog
      ref={dialog}
      className="confirm"
      aria-label="Leave without saving?"
      // Escape closes the dialog: that is "stay".
      onClose={() => blocker.state === 'blocked' && blocker.reset()}
    >
      <h3>Leave without saving?</h3>
      <p>Your changes to {what} are not saved yet and will be lost.</p>
      <div className="actions">
        <button type="button" className="button danger" onClick={() => blocker.state === 'blocked' && blocker.proceed()}>
          Leave and discard
        </button>
        <button ref={stay} type="button" className="button subtle" onClick={() => blocker.state === 'blocked' && blocker.reset()}>
          Stay on this page
        </button>
      </div>
    </dialog>
  );
}
