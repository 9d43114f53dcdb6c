import { ApplicationList } from '../components/ApplicationList';

/** Account keys: the account's own applications (GET /applications); the operator creates them. */
export function AccountHome() {
  return (
    <div className="stack">
      <h1>Applications</h1>
      <section className="card" aria-labelledby="apps-heading">
        <h2 id="apps-heading">Your applications</h2>
        <ApplicationList empty="This account has no applications yet. Your operator creates them." />
      </section>
    </div>
  );
}
