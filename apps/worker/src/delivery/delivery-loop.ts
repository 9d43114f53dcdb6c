import { randomBytes } from 'node:crypto';
import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import {
  AttemptContextRecord,
  ChannelListener,
  ClaimBatch,
  ClaimedDelivery,
  ClaimOptions,
  DELIVERY_CHANNEL,
  DeliveryQueueRepository,
  THROTTLE_LATE_MS,
} from '@herald/database/queue';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { AttemptOutcome } from './attempt-outcome';
import { DatabaseClock } from './database-clock';
import { AttemptExchange, DeliveryAttempt, recordedAs } from './delivery-attempt';
import { NewDeliveries } from './new-deliveries';
import { PlannerStatisticsPolicy } from './planner-statistics';

/**
 * At most this many deliveries are claimed in one statement. A claim's planning and its walk of
 * the applications cost PostgreSQL about the same for ten rows as for a hundred, so a worker with
 * the slots for them takes them in fewer claims (50 → 100 took batch publishes from 426 claims to
 * 294 per 20,200 deliveries; bench/README.md, "Issue 20, fourth sitting").
 */
const CLAIM_BATCH = 100;
/** Idle polling: the fallback behind NOTIFY on PostgreSQL, the only wake-up on PGlite. */
const POLL_INTERVAL_MS = 1_000;
const EMBEDDED_POLL_INTERVAL_MS = 250;
/** After a database error, wait this long before claiming again. */
const ERROR_BACKOFF_MS = 1_000;
/** In-flight attempts get this long to finish at shutdown; the rest are cut off and released. */
const SHUTDOWN_GRACE_MS = 25_000;
/**
 * Outcomes waiting for the finisher, in slots' worth: above HERALD_WORKER_CONCURRENCY times this,
 * the loop stops claiming until the finisher catches up, so a slow database slows the sending
 * rather than piling up leases (and sent-but-unrecorded attempts a crash would send again).
 */
const RECORDING_BACKLOG_SLOTS = 2;
/**
 * A claim waiting to ride on the next finish of its application (claimAfterFinishing) waits this
 * long at most; then the loop claims on its own. Under a flood outcomes come every few milliseconds.
 */
const RIDE_PATIENCE_MS = 20;
/**
 * A held delivery is started only while its lease (and the lease of the slots it uses) has its
 * attempt's deadline and this much more to run (or half of what the lease has beyond the
 * deadline, when that is less): an attempt still going when the lease ends would be counted by
 * no endpoint cap, and its delivery could be claimed again.
 */
const LEASE_MARGIN_MS = 10_000;
/** Deliveries held per endpoint slot at most (DeliveryLoop.deliveriesPerSlot). */
const MAX_DELIVERIES_PER_SLOT = 3;
/**
 * Deliveries are held behind an endpoint's slots only while its attempts take less than this on
 * average (FAST_EXCHANGE_WEIGHT: the last few count most): there a claim's round trip is a large
 * part of a slot's cycle, and a held delivery waits a few tens of milliseconds. Behind a slow
 * endpoint it would wait seconds for nothing gained (and go out with the configuration its
 * claim read, however long ago): its claims take only what its slots can start.
 */
const FAST_EXCHANGE_MS = 250;
const FAST_EXCHANGE_WEIGHT = 0.2;

/**
 * Claims due deliveries and runs their attempts, never more than HERALD_WORKER_CONCURRENCY at
 * once nor more than HERALD_WORKER_HOST_CONCURRENCY towards one host (so one slow customer
 * cannot take every slot), nor more than the endpoint slots its claims hold (the endpoint caps
 * across workers, PRODUCT.md §17). A slot is one HTTP exchange: its outcome goes to the queue's
 * finisher (batched statements, two in flight) and the slot to the next delivery while it is
 * recorded. A claim leases up to `deliveriesPerSlot` deliveries per endpoint slot: the ones
 * beyond the slots wait here (`waiting`) and start the moment an attempt to their endpoint
 * ends, not after its finish commits and another claim (bench/README.md, "Issue 23, endpoint
 * slots"). The loop stops claiming while the finisher is RECORDING_BACKLOG_SLOTS behind. It
 * sleeps until the next delivery is due, a NOTIFY arrives, or an exchange or a recorded outcome
 * frees room worth a claim. A delivery of a throttled webhook is held (counted in flight) until
 * the slot the claim gave it, then attempted. On shutdown it stops claiming, hands back what
 * waits, lets attempts finish, and releases whatever is still in flight after the grace period.
 */
@Injectable()
export class DeliveryLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryLoop.name);
  /** Slots taken: an exchange each (or a throttled delivery held for its slot). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Outcomes handed to the finisher and not yet committed. */
  private readonly recording = new Set<Promise<void>>();
  /** Exchanges in flight per destination host: what the host cap limits (and the claim is told). */
  private readonly perHost = new Map<string, number>();
  /** Exchanges in flight per application: while it has some, a finish of its lane is coming (claimAfterFinishing). */
  private readonly exchangesPerApplication = new Map<number, number>();
  /** Outcomes being recorded per host: their leases, and so the endpoints' room, come back when they commit. */
  private readonly recordingPerHost = new Map<string, number>();
  /** Deliveries waiting for one of their endpoint's slots, per application, oldest first. */
  private readonly waiting = new Map<number, HeldDelivery[]>();
  private waitingCount = 0;
  /** The same per destination host (the claim is told what this worker holds per host). */
  private readonly waitingPerHost = new Map<string, number>();
  /**
   * Endpoint slots per application, as this worker's latest claim of it recorded them (until
   * that claim's lease ends): the slots the claims count for this worker (queue.sql.ts,
   * endpointInFlight), never more.
   */
  private readonly endpointSlots = new Map<number, { slots: number; leaseUntil: number }>();
  /** This process, as the holder of its claims' endpoint slots. */
  private readonly holder = randomBytes(9).toString('base64url');
  /** Per application with deliveries held here, its attempts' average duration (ms; FAST_EXCHANGE_MS). */
  private readonly exchangeMs = new Map<number, number>();
  /**
   * Deliveries claimed while the worker had all HERALD_WORKER_CONCURRENCY slots taken that take no
   * endpoint slot (throttled ones, the operator's notices): started as slots free, in order.
   */
  private readonly waitingForWorker: HeldDelivery[] = [];
  /** A riding claim found no room in the worker: the next slot freed wakes the loop. */
  private claimWhenFree = false;
  /**
   * The last claim may have left due work behind (it took all it could, or an endpoint had no room
   * for some): nothing left in progress is then a reason to claim again. After a claim that took
   * all that was due it is not (one wasted claim, and commit, per delivery at low load).
   */
  private workLeft = true;
  /** Which NOTIFYs bring deliveries no claim has taken (a claim's snapshot may have seen them). */
  private readonly newDeliveries = new NewDeliveries();
  private readonly shutdown = new AbortController();
  private readonly listener: ChannelListener | null;
  private running: Promise<void> | null = null;
  /** The loop's own claim is running. */
  private claimingHere = false;
  /** A claim riding on a finish (claimAfterFinishing), until its deliveries are started. */
  private ride: Ride | null = null;
  /**
   * Wake-up rules passed over while a rider was on its way (one claim at a time): a claim is
   * owed once it is done, unless its own claim took that room (owesAClaim).
   */
  private wakeOwed = false;
  /** Applications whose held deliveries fell to their top-up point while a rider was on its way. */
  private readonly owedApplications = new Set<number>();
  /** A wake-up at the due time a rider's claim saw (wakeWhenDue). */
  private dueWake: NodeJS.Timeout | null = null;
  private dueWakeAt = 0;
  private stopping = false;
  private wakePending = false;
  /** When the next delivery falls due, as last read after a claim; null: none known. */
  private nextDueAt: number | null = null;
  /** The time the last claim took due deliveries up to. */
  private lastClaimAt = 0;
  /** What the last claim said of the next delivery to fall due after it (or lease to run out). */
  private claimedNextDueAt: number | null = null;
  private wakeWaiter: (() => void) | null = null;
  /** When this worker last refreshed the planner's statistics (ms), after a slow claim. */
  private readonly plannerStatistics = new PlannerStatisticsPolicy();
  /** Where the next claim's walk of the applications goes on from (ClaimBatch.lastVisited). */
  private walkFrom = 0;
  /** Held throttled deliveries waiting for their slot: shutdown ends their waits. */
  private readonly holdWaiters = new Set<() => void>();
  /** Throttle slots are database time; this turns them into this process's. */
  private readonly databaseClock = new DatabaseClock();

  constructor(
    private readonly queue: DeliveryQueueRepository,
    private readonly attempt: DeliveryAttempt,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly metrics: WorkerMetrics,
  ) {
    metrics.observeInFlight(
      () => this.inFlight.size,
      () => this.recording.size,
      () => this.waitingCount,
    );
    this.listener =
      config.database.embedded || !config.database.url
        ? null
        : new ChannelListener(config.database.url, DELIVERY_CHANNEL, {
            onNotification: (payload) => {
              if (this.newDeliveries.notified(payload)) this.wake();
            },
            // Notifications sent while disconnected are lost: claim once to catch up.
            onReconnected: () => this.wake(),
            onError: (error) => this.logger.warn(`LISTEN connection lost, reconnecting: ${error.message}`),
          });
  }

  onApplicationBootstrap(): void {
    void this.listener?.start();
    this.running = this.loop();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.dueWake !== null) clearTimeout(this.dueWake);
    this.wake();
    for (const stopWaiting of [...this.holdWaiters]) stopWaiting();
    await this.running;
    // A claim riding on a finish may still start what it took: those get the grace period too.
    await this.rideTakenOver();
    // Deliveries waiting for a slot go back to the queue, due now (sendAllWaiting).
    this.sendAllWaiting();
    const cutOff = setTimeout(() => this.shutdown.abort(), SHUTDOWN_GRACE_MS);
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(cutOff);
    // Every slot has ended, so every outcome is with the finisher: drained before the pool closes.
    await Promise.allSettled([...this.recording]);
    await this.listener?.stop();
  }

  /**
   * Under load, claim once a quarter of the slots are free rather than one slot at a time: each
   * claim is a statement and a commit, whatever its size.
   */
  private get worthClaiming(): number {
    return Math.max(1, Math.min(CLAIM_BATCH, Math.floor(this.config.delivery.workerConcurrency / 4)));
  }

  /** The same for one host: a host with less room than this is left out of claims (DeliveryQueueRepository.claim). */
  private get minHostRoom(): number {
    return Math.max(1, Math.floor(this.config.delivery.hostConcurrency / 4));
  }

  private get recordingBacklog(): number {
    return this.config.delivery.workerConcurrency * RECORDING_BACKLOG_SLOTS;
  }

  /**
   * Deliveries held per endpoint slot, at most: as many as can each wait for those ahead of it to
   * take their whole deadline and still be sent and recorded within the lease, at most
   * MAX_DELIVERIES_PER_SLOT (3 with the default 15 s deadline and 60 s lease; 1, none waiting,
   * when the lease is barely longer than the deadline). Only fast endpoints get more than one
   * (deliveriesPerSlotOf).
   */
  private get deliveriesPerSlot(): number {
    const { leaseSeconds, timeoutSeconds } = this.config.delivery;
    return Math.max(1, Math.min(MAX_DELIVERIES_PER_SLOT, Math.floor((leaseSeconds * 1000 - this.leaseMarginMs) / (timeoutSeconds * 1000))));
  }

  /** LEASE_MARGIN_MS, or half of what the lease has beyond the attempt's deadline when that is less. */
  private get leaseMarginMs(): number {
    const { leaseSeconds, timeoutSeconds } = this.config.delivery;
    return Math.min(LEASE_MARGIN_MS, ((leaseSeconds - timeoutSeconds) * 1000) / 2);
  }

  /** Deliveries per slot for the application's endpoint: more than one only while its attempts are fast. */
  private deliveriesPerSlotOf(applicationId: number): number {
    const ms = this.exchangeMs.get(applicationId);
    return ms !== undefined && ms < FAST_EXCHANGE_MS ? this.deliveriesPerSlot : 1;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      await this.rideTakenOver();
      // A rider may have been handed over while this awaited: it goes first (the next turn).
      if (this.ride !== null) continue;
      if (this.stopping) break;
      // Held deliveries whose slots' lease runs short with nothing sending for them go back now.
      this.sendAllWaiting();
      // Behind on recording: no slot counts as free until the finisher catches up (it wakes the loop).
      const free = this.freeSlots();
      const somethingDue = this.nextDueAt !== null && this.nextDueAt <= this.clock.now().getTime();
      let shortClaim = false;
      if (free > 0 && (free >= this.worthClaiming || this.inFlight.size === 0 || somethingDue)) {
        const limit = Math.min(free, CLAIM_BATCH);
        try {
          // More may be waiting: the claim took (or left waiting for a throttle slot) all it
          // could, or its walk has applications left to visit.
          const { dealtWith, moreApplications } = await this.claimAndStart(limit);
          if (dealtWith === limit || moreApplications) continue;
          shortClaim = true;
        } catch (error) {
          this.newDeliveries.claimEnded(null, true);
          this.logger.error({ err: error }, 'claiming deliveries failed; retrying shortly');
          await this.sleep(ERROR_BACKOFF_MS);
          continue;
        }
      }
      await this.waitForWork(shortClaim);
    }
  }

  /**
   * Claims and starts what it claimed; returns how many due deliveries the claim dealt with, and
   * whether its walk of the applications stopped before the last one.
   */
  private async claimAndStart(limit: number): Promise<{ dealtWith: number; moreApplications: boolean }> {
    this.wakePending = false;
    // This claim serves whatever a rider's wait made the loop pass over.
    this.wakeOwed = false;
    this.owedApplications.clear();
    const lease = this.newLease(limit);
    this.claimingHere = true;
    try {
      const batch = await this.queue.claim(this.claimOptions(lease));
      this.metrics.recordClaim('own');
      return this.startClaimed(batch, lease);
    } finally {
      this.claimingHere = false;
    }
  }

  /**
   * A claim that rides on the finish of an outcome just handed over
   * (DeliveryQueueRepository.claimAfterFinishing), for room that comes back only as that outcome
   * commits (its lease ends): it sees the leases that finish ends, and shares its commit. Its size
   * is decided when it runs, from the slots free then. One claim at a time, the loop's own or a
   * rider: the limits count this worker's slots as the claim starts, so a loop woken meanwhile
   * waits for a rider that has started and takes over one that has not. When the rider took all
   * it could or the walk has applications left, the loop claims on (as after a claim of its own);
   * when it failed, the loop claims instead.
   */
  private claimAfterFinishing(applicationId: number): void {
    if (this.stopping || this.claimingHere) return;
    if (this.ride !== null) {
      // One claim at a time: this room is claimed for once the rider is done.
      this.owedApplications.add(applicationId);
      return;
    }
    const ride: Ride = { started: false, cancelled: false, done: Promise.resolve(), withdraw: () => false };
    let lease: Lease | null = null;
    // With more of the application's exchanges to end, the claim waits for the next of their
    // finishes rather than going alone: alone it would cost the commit it is meant to save. Should
    // none come soon (they fail before a finish, or hang), the loop takes over.
    const withNextFinish = (this.exchangesPerApplication.get(applicationId) ?? 0) > 0;
    const patience = withNextFinish ? setTimeout(() => this.ride === ride && !ride.started && this.wake(), RIDE_PATIENCE_MS) : null;
    const { claimed, withdraw } = this.queue.claimAfterFinishing(
      applicationId,
      () => {
        const free = this.freeSlots();
        if (ride.cancelled || this.stopping) return null;
        if (free <= 0) {
          // The worker holds all it may: the next slot to free claims for this.
          this.claimWhenFree = true;
          return null;
        }
        if (this.claimingHere) {
          // The loop's own claim is running and may have counted the endpoint before this finish
          // freed its room: the room is owed a claim once it is done.
          this.wakeOwed = true;
          return null;
        }
        ride.started = true;
        lease = this.newLease(Math.min(free, CLAIM_BATCH));
        return this.claimOptions(lease);
      },
      { withNextFinish },
    );
    ride.done = claimed
      .then((batch) => {
        if (batch === null || lease === null) return;
        this.metrics.recordClaim('with_finish');
        const { dealtWith, moreApplications } = this.startClaimed(batch, lease);
        if (dealtWith === lease.limit || moreApplications) this.wake();
        // Took what there was: the loop's sleep was set before this claim saw what falls due next.
        else this.wakeWhenDue(lease.now.getTime());
      })
      .catch((error) => {
        if (ride.started) this.newDeliveries.claimEnded(null, true);
        this.logger.warn({ err: error }, 'a claim riding on a finish failed; claiming on its own');
        this.wake();
      })
      .finally(() => {
        if (patience) clearTimeout(patience);
        if (this.ride === ride) this.ride = null;
        if (this.owesAClaim()) this.wake();
      });
    ride.withdraw = withdraw;
    this.ride = ride;
  }

  /**
   * One claim at a time: a rider that has started goes first (its limits counted the slots as it
   * started), and one still waiting for its finish is called off, for the caller's own claim (or
   * shutdown) to take over.
   */
  private async rideTakenOver(): Promise<void> {
    const ride = this.ride;
    if (ride?.started) await ride.done;
    else if (ride) {
      ride.cancelled = true;
      ride.withdraw();
      this.ride = null;
    }
  }

  /**
   * After a rider's short claim: wakes the loop when the next delivery that claim saw falls due,
   * if that is sooner than the poll (an expired lease it could not take is no reason: as in
   * waitForWork, that would spin).
   */
  private wakeWhenDue(claimedAt: number): void {
    const next = this.claimedNextDueAt;
    if (next === null || next <= claimedAt || this.stopping) return;
    const wait = next - this.clock.now().getTime();
    if (wait >= POLL_INTERVAL_MS || (this.dueWake !== null && this.dueWakeAt <= next)) return;
    if (this.dueWake !== null) clearTimeout(this.dueWake);
    this.dueWakeAt = next;
    this.dueWake = setTimeout(
      () => {
        this.dueWake = null;
        this.wake();
      },
      Math.max(0, wait),
    );
  }

  /**
   * Whether a rider that has just finished leaves a claim owed: a rule passed over while it was
   * on its way, or an application whose held deliveries fell to their top-up point then and are
   * still there after its claim.
   */
  private owesAClaim(): boolean {
    const owed =
      this.wakeOwed || [...this.owedApplications].some((applicationId) => this.heldOf(applicationId) <= this.topUpAt(applicationId));
    this.wakeOwed = false;
    this.owedApplications.clear();
    return owed;
  }

  /**
   * Deliveries a claim may take now: the worker holds up to deliveriesPerSlot per slot of
   * HERALD_WORKER_CONCURRENCY (attempting, or waiting for an endpoint slot); none while the
   * finisher is RECORDING_BACKLOG_SLOTS behind.
   */
  private freeSlots(): number {
    if (this.recording.size >= this.recordingBacklog) return 0;
    return this.config.delivery.workerConcurrency * this.deliveriesPerSlot - this.inFlight.size - this.waitingCount;
  }

  /** Deliveries of the application this worker holds: attempting, or waiting for one of its endpoint's slots. */
  private heldOf(applicationId: number): number {
    return (this.exchangesPerApplication.get(applicationId) ?? 0) + (this.waiting.get(applicationId)?.length ?? 0);
  }

  /**
   * When the application's held deliveries fall to this, a claim tops them up (riding on the
   * finish of the attempt that got there): with deliveries held behind each slot, at one slot's
   * worth less than the most (a claim per slots' worth of deliveries, while a slots' worth still
   * waits to cover its round trip); without, at a quarter of the host cap below it, as for hosts.
   */
  private topUpAt(applicationId: number): number {
    const slots = this.slotsOf(applicationId, this.leaseMarginMs);
    const perSlot = this.deliveriesPerSlotOf(applicationId);
    const most = slots * perSlot;
    return most - Math.min(most, Math.max(this.minHostRoom, Math.floor((slots * (perSlot - 1)) / 2)));
  }

  /**
   * The application's endpoint slots, while the lease of the claim that holds them outlasts an
   * attempt started now by `marginMs` (none for a claim's own deliveries as it returns, as ever).
   */
  private slotsOf(applicationId: number, marginMs: number): number {
    const held = this.endpointSlots.get(applicationId);
    if (held === undefined) return 0;
    if (held.leaseUntil > this.clock.now().getTime() + this.config.delivery.timeoutSeconds * 1000 + marginMs) return held.slots;
    if (this.heldOf(applicationId) === 0) {
      this.endpointSlots.delete(applicationId);
      this.exchangeMs.delete(applicationId);
    }
    return 0;
  }

  private newLease(limit: number): Lease {
    const now = this.clock.now();
    // 96 random bits: unique among the leases alive at any time, and 16 characters, not a UUID's
    // 36, in every queue row a claim writes (WAL, bench storage).
    return { limit, now, token: randomBytes(12).toString('base64url'), startedAt: realTime() };
  }

  private claimOptions(lease: Lease): ClaimOptions {
    this.lastClaimAt = lease.now.getTime();
    this.newDeliveries.claimStarted();
    return {
      limit: lease.limit,
      token: lease.token,
      now: lease.now,
      leaseUntil: new Date(lease.now.getTime() + this.config.delivery.leaseSeconds * 1000),
      hostsInFlight: sum(this.perHost, this.waitingPerHost),
      hostCap: this.config.delivery.hostConcurrency,
      minHostRoom: this.minHostRoom,
      endpointCap: this.config.delivery.endpointMaxInFlight,
      afterApplicationId: this.walkFrom,
      holder: this.holder,
      heldPerApplication: sum(
        this.exchangesPerApplication,
        new Map([...this.waiting].map(([applicationId, held]) => [applicationId, held.length])),
      ),
      deliveriesPerSlot: 1,
      deliveriesPerSlotOf: new Map(
        [...this.exchangeMs.keys()].map((applicationId) => [applicationId, this.deliveriesPerSlotOf(applicationId)]),
      ),
    };
  }

  /** Starts what a claim took; returns how many due deliveries it dealt with, and whether its walk stopped before the last application. */
  private startClaimed(batch: ClaimBatch, lease: Lease): { dealtWith: number; moreApplications: boolean } {
    const { deliveries: claimed, waiting, databaseTimeMs, nextClaimableAt, lastVisited, moreApplications, leftForRoom, lockedOut } = batch;
    this.workLeft = leftForRoom || moreApplications || claimed.length + waiting >= lease.limit;
    // Deliveries notified while it ran that its snapshot did not see: claim again for them. Due
    // work another worker's claim was serving is left too: that claim may not see what this one did.
    if (this.newDeliveries.claimEnded(batch.snapshot, this.workLeft || lockedOut)) this.wake();
    this.walkFrom = lastVisited;
    this.refreshPlannerStatistics(realTime() - lease.startedAt, claimed.length);
    if (databaseTimeMs !== null) this.databaseClock.observe(databaseTimeMs, realTime());
    this.claimedNextDueAt = nextClaimableAt?.getTime() ?? null;
    this.metrics.recordThrottled('waiting', waiting);
    const leaseUntil = lease.now.getTime() + this.config.delivery.leaseSeconds * 1000;
    // From now on the worker holds the slots this claim recorded (fewer, too, when the others took room meanwhile).
    for (const [applicationId, slots] of batch.endpointSlots) this.endpointSlots.set(applicationId, { slots, leaseUntil });
    for (const delivery of claimed) {
      const usesEndpointSlots =
        delivery.throttle === null &&
        delivery.context.destination === 'webhook' &&
        batch.endpointSlots.has(delivery.applicationId) &&
        delivery.context.destinationHost !== '';
      if (usesEndpointSlots) this.hold(delivery, lease.token, leaseUntil);
      else if (this.inFlight.size < this.config.delivery.workerConcurrency) this.start(delivery, lease.token);
      else this.waitingForWorker.push({ delivery, token: lease.token, leaseUntil });
    }
    for (const applicationId of batch.endpointSlots.keys()) this.sendWaiting(applicationId, true);
    return { dealtWith: claimed.length + waiting, moreApplications };
  }

  /** Holds a claimed delivery until one of its endpoint's slots is free (sendWaiting). */
  private hold(delivery: ClaimedDelivery, token: string, leaseUntil: number): void {
    const queue = this.waiting.get(delivery.applicationId) ?? [];
    queue.push({ delivery, token, leaseUntil });
    this.waiting.set(delivery.applicationId, queue);
    this.waitingCount++;
    count(this.waitingPerHost, delivery.context.destinationHost, +1);
  }

  /**
   * Starts the application's waiting deliveries while its endpoint, its host and the worker have
   * slots free and the finisher keeps up. One whose lease no longer outlasts an attempt by
   * LEASE_MARGIN_MS (none for a claim's own as it returns, `fresh`), or any shutting down, is
   * handed back, due now, for a worker to claim again.
   */
  private sendWaiting(applicationId: number, fresh = false): void {
    const queue = this.waiting.get(applicationId);
    const marginMs = fresh ? 0 : this.leaseMarginMs;
    while (queue !== undefined && queue.length > 0) {
      const next = queue[0];
      const host = next.delivery.context.destinationHost;
      const now = this.clock.now();
      const tooLate = next.leaseUntil <= now.getTime() + this.config.delivery.timeoutSeconds * 1000 + marginMs;
      if (!this.stopping && !tooLate) {
        const room =
          (this.exchangesPerApplication.get(applicationId) ?? 0) < this.slotsOf(applicationId, marginMs) &&
          (this.perHost.get(host) ?? 0) < this.config.delivery.hostConcurrency &&
          this.inFlight.size < this.config.delivery.workerConcurrency &&
          // Behind on recording: sending slows down with it (RECORDING_BACKLOG_SLOTS).
          this.recording.size < this.recordingBacklog;
        if (!room) break;
      }
      queue.shift();
      this.waitingCount--;
      count(this.waitingPerHost, host, -1);
      if (this.stopping || tooLate) this.handBack(next.delivery, next.token);
      else this.send(next.delivery, next.token, true);
    }
    if (queue !== undefined && queue.length === 0) this.waiting.delete(applicationId);
  }

  /**
   * Starts what waits for a slot of the worker's (throttled deliveries, the operator's notices), in
   * order, then what waits for an endpoint slot, application by application, from the one after
   * `after` round (so a host or worker slot an attempt freed goes to the others first); shutting
   * down, hands all of it back.
   */
  private sendAllWaiting(after?: number): void {
    while (this.waitingForWorker.length > 0 && (this.stopping || this.inFlight.size < this.config.delivery.workerConcurrency)) {
      const { delivery, token } = this.waitingForWorker.shift()!;
      if (this.stopping) this.handBack(delivery, token);
      else this.start(delivery, token);
    }
    const applications = [...this.waiting.keys()];
    const from = after === undefined ? 0 : applications.indexOf(after) + 1;
    for (const applicationId of [...applications.slice(from), ...applications.slice(0, from)]) this.sendWaiting(applicationId);
  }

  /** Refreshes the planner's statistics when PlannerStatisticsPolicy says so, in the background. */
  private refreshPlannerStatistics(claimMs: number, claimedRows: number): void {
    const refresh = this.plannerStatistics.observeClaim(claimMs, claimedRows, realTime());
    if (!refresh) return;
    if (claimMs >= PlannerStatisticsPolicy.SLOW_CLAIM_MS)
      this.logger.warn({ claimMs: Math.round(claimMs), tables: refresh.scope }, 'a claim was slow: refreshing the planner statistics');
    void this.queue
      .refreshPlannerStatistics(refresh.scope === 'queue' ? ['delivery_queue'] : undefined, { unlessWithinMs: refresh.unlessWithinMs })
      .then(({ notices }) => {
        // A role that does not own the tables analyzes nothing, and PostgreSQL only warns: the
        // plans then wait for autovacuum.
        for (const notice of notices) this.logger.warn({ notice }, 'refreshing the planner statistics: PostgreSQL warned');
      })
      .catch((error) => this.logger.error({ err: error }, 'refreshing the planner statistics failed'));
  }

  /** Starts a delivery that takes no endpoint slot (a throttled one, the operator's notices), unless its host is at the cap. */
  private start(delivery: ClaimedDelivery, token: string): void {
    const host = delivery.context.destinationHost;
    const onHost = this.perHost.get(host) ?? 0;
    if (host && onHost >= this.config.delivery.hostConcurrency) {
      // The claim takes no more for a host than its room, so only a host shared by two
      // destinations that reached it in one claim (a notice and a webhook) gets here: hand it
      // back for when there is room (a throttled one keeps its slot).
      this.handBack(delivery, token);
      return;
    }
    this.send(delivery, token, false);
  }

  /** Hands a claimed delivery back unsent, due now; a throttled one keeps its slot. */
  private handBack(delivery: ClaimedDelivery, token: string): void {
    const dueAt = this.clock.now();
    const handedBack = delivery.throttle
      ? this.queue.releaseKeepingSlot(delivery.id, token, delivery.throttle.slot, dueAt)
      : this.queue.release(delivery.id, token, dueAt);
    void handedBack.catch((error) => this.logger.error({ err: error }, 'release failed'));
  }

  /** Runs the delivery's attempt in a slot (one of its endpoint's, `endpointSlot`: sendWaiting). */
  private send(delivery: ClaimedDelivery, token: string, endpointSlot: boolean): void {
    const { context } = delivery;
    const host = context.destinationHost;
    const applicationId = delivery.applicationId;
    count(this.perHost, host, +1);
    count(this.exchangesPerApplication, delivery.applicationId, +1);
    const slotStarted = realTime();
    const exchange = delivery.throttle
      ? this.attemptInSlot(delivery, delivery.throttle, context, token)
      : this.attempt.run(delivery, context, token, this.shutdown.signal);
    let handedToFinisher = false;
    let throughFinisher = false;
    const slot = exchange
      .then(({ recorded, viaFinisher }) => {
        handedToFinisher = true;
        throughFinisher = viaFinisher === true;
        this.awaitRecording(delivery.id, host, recorded);
      })
      .catch((error) =>
        // The lease will run out and another attempt will follow; nothing is lost.
        this.logger.error({ err: error, deliveryId: delivery.id }, 'attempt could not be made'),
      )
      .finally(() => {
        const slotMs = realTime() - slotStarted;
        this.metrics.recordSlot(slotMs / 1000);
        const exchangingOnHost = count(this.perHost, host, -1);
        const heldBefore = this.heldOf(applicationId);
        count(this.exchangesPerApplication, applicationId, -1);
        this.inFlight.delete(slot);
        if (endpointSlot) {
          const average = this.exchangeMs.get(applicationId);
          this.exchangeMs.set(applicationId, average === undefined ? slotMs : average + FAST_EXCHANGE_WEIGHT * (slotMs - average));
        }
        // The slots go to deliveries waiting for them: the worker's and the host's to the other
        // applications first, the endpoint's to this one's next.
        this.sendAllWaiting(applicationId);
        if (this.claimWhenFree && this.freeSlots() > 0) {
          this.claimWhenFree = false;
          this.wake();
        }
        // Deliveries held behind the endpoint's slots fell to their top-up point: a claim for
        // more goes with this outcome's finish (topUpAt). Without endpoint slots, the host's
        // room this exchange leaves comes back as its outcome commits (the throttle's caps count
        // leases): a claim for it goes with that finish.
        const topUp = endpointSlot
          ? heldBefore > this.topUpAt(applicationId) && this.heldOf(applicationId) <= this.topUpAt(applicationId)
          : host !== '' && this.config.delivery.hostConcurrency - exchangingOnHost === this.minHostRoom;
        if (handedToFinisher) {
          if (this.worthAClaimAfterExchange()) this.wake();
          else if (topUp && throughFinisher) this.claimAfterFinishing(applicationId);
          else if (topUp) this.wake();
        } else if (topUp || this.worthAClaimAfterExchange() || this.worthAClaimAfterRecording(host, this.recordingPerHost.get(host) ?? 0)) {
          // Nothing to record after a failed attempt: its part of the host's room is back now.
          this.wake();
        }
      });
    this.inFlight.add(slot);
  }

  /** Counts an outcome the finisher is writing, until it commits (and with it the lease ends). */
  private awaitRecording(deliveryId: string, host: string, recorded: Promise<AttemptOutcome>): void {
    count(this.recordingPerHost, host, +1);
    const recording = recorded
      .then((outcome) => {
        this.metrics.recordOutcome(outcome);
        this.logger.debug({ deliveryId, outcome }, 'attempt finished');
      })
      .catch((error) =>
        // The lease will run out and another attempt will follow; nothing is lost.
        this.logger.error({ err: error, deliveryId }, 'attempt could not be recorded'),
      )
      .finally(() => {
        this.recording.delete(recording);
        const recordingOnHost = count(this.recordingPerHost, host, -1);
        if (this.recording.size === this.recordingBacklog - 1) this.sendAllWaiting();
        if (!this.worthAClaimAfterRecording(host, recordingOnHost)) return;
        if (this.ride === null) this.wake();
        else this.wakeOwed = true;
      });
    this.recording.add(recording);
  }

  /**
   * Whether an exchange that ended may have made a claim worth its statement: the worker's free
   * slots just reached the size worth claiming for, or nothing at all is in progress after a claim
   * that may have left due work (workLeft). A claim
   * that took everything it could left due work only for hosts or endpoints short of room, or
   * none; their room comes back as leases end, when outcomes are recorded (worthAClaimAfterRecording),
   * not when the exchange ends. Waking on every finished attempt cost a claim, and its commit,
   * per delivery under a flood to one host (bench/ storage). New events wake the loop by NOTIFY;
   * retries by their due time.
   */
  private worthAClaimAfterExchange(): boolean {
    const free = this.config.delivery.workerConcurrency - this.inFlight.size;
    return free === this.worthClaiming || (this.workLeft && this.inFlight.size === 0 && this.recording.size === 0);
  }

  /**
   * Whether a recorded outcome (a lease that ended) may have made a claim worth its statement:
   * its host's room, counted in leases (exchanging and recording) as the throttle's caps count
   * theirs, just reached a quarter of HERALD_WORKER_HOST_CONCURRENCY; the finisher's backlog just
   * fell below the bound the loop stopped claiming at; or nothing is in progress any more after a
   * claim that may have left due work (workLeft).
   * Endpoints with slots are topped up as their attempts end (topUpAt); another worker's leases
   * ending is seen by the next claim or the poll.
   */
  private worthAClaimAfterRecording(host: string, recordingOnHost: number): boolean {
    const leasedOnHost = (this.perHost.get(host) ?? 0) + recordingOnHost;
    return (
      (host !== '' && this.config.delivery.hostConcurrency - leasedOnHost === this.minHostRoom) ||
      this.recording.size === this.recordingBacklog - 1 ||
      (this.workLeft && this.inFlight.size === 0 && this.recording.size === 0)
    );
  }

  /**
   * Waits for the delivery's throttle slot, then attempts it. A slot missed by more than
   * THROTTLE_LATE_MS (the process was too busy to send on time) is not used: the delivery goes
   * back to take a new one, since a late attempt would crowd the next second at the receiver.
   * Shutdown hands it back with its slot, for another worker to use. Real time, not the
   * injected clock: the slot is a moment at the receiver.
   */
  private async attemptInSlot(
    delivery: ClaimedDelivery,
    throttle: NonNullable<ClaimedDelivery['throttle']>,
    context: AttemptContextRecord,
    token: string,
  ): Promise<AttemptExchange> {
    const signal = this.shutdown.signal;
    const slotAt = this.databaseClock.toLocal(throttle.slotMs);
    const wait = slotAt - realTime();
    if (wait > 0 && !this.stopping) await this.sleepUnlessStopping(wait);
    if (this.stopping) {
      return recordedAs(this.queue.releaseKeepingSlot(delivery.id, token, throttle.slot, this.clock.now()), 'released');
    }
    if (realTime() - slotAt > THROTTLE_LATE_MS) {
      this.metrics.recordThrottled('slot_missed', 1);
      return recordedAs(this.queue.release(delivery.id, token, this.clock.now()), 'released');
    }
    return this.attempt.run(delivery, context, token, signal);
  }

  /** A timer for a held delivery that shutdown cuts short (the loop's own sleep is for the loop). */
  private sleepUnlessStopping(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.holdWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.holdWaiters.add(done);
    });
  }

  /**
   * Sleeps until the next delivery is due, capped by the poll interval; a NOTIFY or a finished
   * attempt wakes it sooner. After a claim that took everything it could, "the next one" is what
   * that claim read (DeliveryQueueRepository.claim): due work it left was for hosts or endpoints
   * short of room, and ending exchanges and recorded outcomes wake the loop for those
   * (topUpAt, worthAClaimAfterExchange, worthAClaimAfterRecording).
   */
  private async waitForWork(afterShortClaim: boolean): Promise<void> {
    const poll = this.config.database.embedded ? EMBEDDED_POLL_INTERVAL_MS : POLL_INTERVAL_MS;
    if (afterShortClaim) {
      // An expired lease the claim could not take (its host is short of room) is no reason to
      // claim again by time: that would spin. Its host's finishing attempts wake the loop.
      const next = this.claimedNextDueAt;
      this.nextDueAt = next !== null && next > this.lastClaimAt ? next : null;
    }
    let waitMs = poll;
    // Only while a claim could take something: with every slot busy, or the finisher's backlog at
    // its bound, a due time already past would spin the loop; an ending exchange or a recorded
    // outcome wakes it instead.
    const canClaim = this.inFlight.size < this.config.delivery.workerConcurrency && this.recording.size < this.recordingBacklog;
    if (this.nextDueAt !== null && canClaim) {
      waitMs = Math.max(0, Math.min(poll, this.nextDueAt - this.clock.now().getTime()));
    }
    await this.sleep(waitMs);
  }

  /** Sleeps, unless woken: by a NOTIFY, a finished attempt, or shutdown. */
  private sleep(ms: number): Promise<void> {
    if (this.wakePending || this.stopping) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        if (this.wakeWaiter === finish) this.wakeWaiter = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeWaiter = finish;
    });
  }

  private wake(): void {
    if (this.wakeWaiter) this.wakeWaiter();
    else this.wakePending = true;
  }
}

/** A claim riding on a finish: whether it has started (its size decided), or was taken over by the loop's own claim. */
interface Ride {
  started: boolean;
  cancelled: boolean;
  /** Settles once its deliveries are started (or it took none, or failed). */
  done: Promise<void>;
  /** Takes it back from the finisher lane, when no finish has taken it up yet. */
  withdraw: () => boolean;
}

/** A claim's lease: its token, its size and the moment it was taken. */
interface Lease {
  limit: number;
  token: string;
  now: Date;
  /** Real time as the claim started, for the slow-claim rule (PlannerStatisticsPolicy). */
  startedAt: number;
}

/** A delivery waiting for one of its endpoint's slots, with its claim's token and lease (epoch ms). */
interface HeldDelivery {
  delivery: ClaimedDelivery;
  token: string;
  leaseUntil: number;
}

/** The counts of two maps added key by key. */
function sum<K>(a: ReadonlyMap<K, number>, b: ReadonlyMap<K, number>): Map<K, number> {
  const total = new Map(a);
  for (const [key, n] of b) total.set(key, (total.get(key) ?? 0) + n);
  return total;
}

/** Adds `delta` to the key's count (a host's, an application's), dropping keys at 0; returns the new count. */
function count<K>(counts: Map<K, number>, key: K, delta: number): number {
  const next = (counts.get(key) ?? 0) + delta;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
  return Math.max(0, next);
}

/** Milliseconds on a clock that never steps back (monotonic), for throttle slots. */
function realTime(): number {
  return performance.timeOrigin + performance.now();
}
