/**
 * Whether a NOTIFY of new deliveries is news to this worker. A publish notifies with its
 * transaction's id; a claim reports the snapshot it read the queue in (ClaimBatch.snapshot). A
 * notification whose transaction the last claim already saw, when that claim took everything it
 * saw due, brings nothing to claim: the claim took those deliveries. Notifications arrive
 * milliseconds after their commit, often after a claim has started that sees the commit: with
 * single publishes, a claim for each of those took nothing (a third of all claims, about 1 ms of
 * PostgreSQL each; bench/README.md, "Issue 20, eighth sitting").
 *
 * A notification without a transaction id (another sender: a retry, a resume, a replay; or a
 * reconnect, after which some may have been lost) is always news. So is one that comes while a
 * claim is running, unless that claim's snapshot turns out to have seen it.
 */
export class NewDeliveries {
  private claiming = false;
  /** Transactions notified while a claim ran: news unless its snapshot saw them. */
  private notifiedDuringClaim: bigint[] = [];
  /** Something was notified that no claim has seen since (true at start: nothing is known). */
  private news = true;
  /** The last claim's snapshot when it took all it saw due; null when it left work or failed. */
  private sawAllOf: Snapshot | null = null;

  /** A NOTIFY with `payload`; true when it may bring deliveries no claim took: wake the loop. */
  notified(payload: string): boolean {
    const transaction = transactionId(payload);
    if (transaction !== null && this.claiming) {
      this.notifiedDuringClaim.push(transaction);
      return false;
    }
    if (transaction !== null && this.sawAllOf !== null && visibleIn(transaction, this.sawAllOf)) return false;
    this.news = true;
    return true;
  }

  /** A reconnect of the LISTEN connection: what was notified meanwhile is lost, so assume news. */
  reconnected(): void {
    this.news = true;
  }

  /** A claim is starting: whatever committed before is in its snapshot. */
  claimStarted(): void {
    this.claiming = true;
    this.notifiedDuringClaim = [];
    this.news = false;
  }

  /**
   * The claim ended, having read the queue in `snapshot` (null: failed, or not said) and left
   * work due (`leftWork`) or not. True when something notified while it ran was not in its
   * snapshot: claim again.
   */
  claimEnded(snapshot: string | null, leftWork: boolean): boolean {
    this.claiming = false;
    const seen = snapshot === null ? null : parseSnapshot(snapshot);
    this.sawAllOf = leftWork ? null : seen;
    const unseen = this.notifiedDuringClaim.some((transaction) => seen === null || !visibleIn(transaction, seen));
    this.notifiedDuringClaim = [];
    if (unseen) this.news = true;
    return unseen;
  }

  /** Whether anything was notified that no claim has seen since. */
  get hasNews(): boolean {
    return this.news;
  }
}

/** A PostgreSQL snapshot (pg_current_snapshot): transactions below xmin are done, from xmax on not yet begun, xip in progress. */
interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  inProgress: ReadonlySet<bigint>;
}

/** `xmin:xmax:xip,xip…` as pg_snapshot prints it; null for anything else. */
export function parseSnapshot(text: string): Snapshot | null {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text);
  if (!match) return null;
  const inProgress = new Set(match[3] === '' ? [] : match[3].split(',').map((id) => BigInt(id)));
  return { xmin: BigInt(match[1]), xmax: BigInt(match[2]), inProgress };
}

function transactionId(payload: string): bigint | null {
  return /^\d+$/.test(payload) ? BigInt(payload) : null;
}

/** Whether a committed transaction's writes are visible in `snapshot` (pg_visible_in_snapshot's rule). */
export function visibleIn(transaction: bigint, snapshot: Snapshot | null): boolean {
  if (snapshot === null) return false;
  return transaction < snapshot.xmin || (transaction < snapshot.xmax && !snapshot.inProgress.has(transaction));
}
