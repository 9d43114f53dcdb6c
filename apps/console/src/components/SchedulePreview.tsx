import { formatDuration, previewSchedule, type RetryFields } from '../lib/schedule';

/** The retry schedule the form's policy will produce, as a timeline, before anything is saved. */
export function SchedulePreview(props: RetryFields) {
  const delays = previewSchedule(props);
  if (delays === null) {
    return (
      <section className="schedule" aria-label="Retry schedule preview">
        <h3>Retry schedule</h3>
        <p className="muted">Fix the retry fields to see the schedule.</p>
      </section>
    );
  }
  const total = delays.reduce((sum, d) => sum + d, 0);
  let elapsed = 0;
  return (
    <section className="schedule" aria-label="Retry schedule preview">
      <h3>Retry schedule</h3>
      {delays.length === 0 ? (
        <p className="muted">One attempt, no retries.</p>
      ) : (
        <>
          <ol className="timeline">
            <li>
              <span className="dot" aria-hidden="true" />
              <span>First attempt</span>
              <span className="muted">at 0 s</span>
            </li>
            {delays.map((delay, i) => {
              elapsed += delay;
              return (
                <li key={i}>
                  <span className="dot" aria-hidden="true" />
                  <span>
                    Retry {i + 1} after {formatDuration(delay)}
                  </span>
                  <span className="muted">at {formatDuration(elapsed)}</span>
                </li>
              );
            })}
          </ol>
          <p className="muted">
            {delays.length} {delays.length === 1 ? 'retry' : 'retries'} over {formatDuration(total)} at most.
          </p>
        </>
      )}
    </section>
  );
}
