// pg-boss peer, api process: ingest → boss.send (the job's INSERT is committed before the 202).
import PgBoss from 'pg-boss';
import { PeerEvent, required, serveIngest } from './ingest';

async function main(): Promise<void> {
  const queue = required('QUEUE');
  // Scheduling and maintenance belong to the worker's instance.
  const boss = new PgBoss({ connectionString: required('DATABASE_URL'), max: 16, supervise: false, schedule: false });
  boss.on('error', (error) => console.error(error));
  await boss.start();
  await boss.createQueue(queue, { name: queue, retryLimit: 2, retryDelay: 1, expireInSeconds: 60 });
  serveIngest(async (event: PeerEvent) => {
    await boss.send(queue, event);
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
