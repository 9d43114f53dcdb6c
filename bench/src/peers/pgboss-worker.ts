// pg-boss peer, worker process: a fetch/complete loop that keeps 64 jobs in flight (pg-boss's own
// work() waits its polling interval after every batch, which caps it far below this), each signed,
// POSTed and completed with its result as the job's output.
import PgBoss from 'pg-boss';
import { PeerEvent, required } from './ingest';
import { DeliveryResult, webhookSender } from './sender';

const IDLE_POLL_MS = 50;

async function main(): Promise<void> {
  const queue = required('QUEUE');
  const concurrency = Number(required('CONCURRENCY'));
  const send = webhookSender(concurrency);
  const boss = new PgBoss({ connectionString: required('DATABASE_URL'), max: 16 });
  boss.on('error', (error) => console.error(error));
  await boss.start();
  let stopping = false;
  process.on('SIGTERM', () => void (stopping = true));

  let inFlight = 0;
  let slotFreed: () => void = () => {};
  const deliver = async (job: PgBoss.Job<PeerEvent>) => {
    try {
      await boss.complete(queue, job.id, await send(job.data));
    } catch (error) {
      await boss.fail(queue, job.id, { error: String(error), ...(error as { result?: DeliveryResult }).result }).catch(() => {});
    } finally {
      inFlight--;
      slotFreed();
    }
  };
  console.log('worker started');
  while (!stopping) {
    if (inFlight >= concurrency) {
      await new Promise<void>((resolve) => (slotFreed = resolve));
      continue;
    }
    const jobs = await boss.fetch<PeerEvent>(queue, { batchSize: concurrency - inFlight });
    if (jobs.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_POLL_MS));
      continue;
    }
    inFlight += jobs.length;
    for (const job of jobs) void deliver(job);
  }
  await boss.stop({ graceful: true, wait: true, timeout: 5_000 });
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
