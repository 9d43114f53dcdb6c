/**
 * Whether a NOTIFY of new deliveries is news to this worker. A publish notifies with its
 * transaction's id; a claim reports the snapshot it read the queue in (ClaimBatch.snapshot). A
 * notification whose transaction the last claim already saw, when that claim left nothing due
 * behind (ClaimBatch.leftWork), brings nothing to claim: that claim took those deliveries, or
 * what it left waits for room whose return wakes the loop anyway. Notifications arrive
 * milliseconds after their commit, often after a claim has started that sees the commit: with
 * single publishes, a claim for each of those took nothing (a fifth of all claims, about 1 ms of
 * PostgreSQL each; bench/README.md, "Issue 20, eighth sitting").
 *
 * A notification without a transaction id (another sender: a retry, a resume, a replay) always
 * wakes the loop. One that comes while a claim is running waits for that claim's snapshot.
 * Only NOTIFY wake-ups are weighed here: due work that comes without one (a hand-back, a key's
 * next delivery, an expired lease) wakes the loop as it did.
 */
export class NewDeliveries {
  private claiming = false;
  /** Transactions notified while a claim ran: news unless its snapshot saw them. */
  private notifiedDuringClaim: bigint[] = [];
  /** The last claim's snapshot when it left nothing due behind; null when it did, or failed. */
  private sawAllOf: Snapshot | null = null;

  /** A NOTIFY with `payload`; true when it may bring deliveries no claim took: wake the loop. */
  notified(payload: string): boolean {
    const transaction = transactionId(payload);
    if (transaction === null) return true;
    if (this.claiming) {
      this.notifiedDuringClaim.push(transaction);
      return false;
    }
    return !visibleIn(transaction, this.sawAllOf);
  }

  /** A claim is starting: whatever committed before is in its snapshot. */
  claimStarted(): void {
    this.claiming = true;
    this.notifiedDuringClaim = [];
  }

  /**
   * The claim ended, having read the queue in `snapshot` (null: it failed, or did not say) and
   * left work due (`leftWork`) or not. True when something notified while it ran is news by the
   * rule of `notified`: claim again.
   */
  claimEnded(snapshot: string | null, leftWork: boolean): boolean {
    this.claiming = false;
    const seen = snapshot === null ? null : parseSnapshot(snapshot);
    this.sawAllOf = leftWork ? null : seen;
    // Judged as a notification after the claim would be: news unless the claim saw it and left nothing.
    const unseen = this.notifiedDuringClaim.some((transaction) => !visibleIn(transaction, this.sawAllOf));
    this.notifiedDuringClaim = [];
    return unseen;
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

/** Whether a committed transaction's writes are visible in `snapshot` (pg_visible_in_snapshot's rule); never in none. */
export function visibleIn(transaction: bigint, snapshot: Snapshot | null): boolean {
  if (snapshot === null) return false;
  return transaction < snapshot.xmin || (transaction < snapshot.xmax && !snapshot.inProgress.has(transaction));
}
