// BullMQ peer, worker process: 64 jobs in flight, each signed and POSTed; the job's return value is its record.
import { Worker } from 'bullmq';
import { PeerEvent, required } from './ingest';
import { webhookSender } from './sender';

const concurrency = Number(required('CONCURRENCY'));
const send = webhookSender(concurrency);
const worker = new Worker<PeerEvent>(required('QUEUE'), (job) => send(job.data), {
  connection: { host: '127.0.0.1', port: Number(required('REDIS_PORT')), maxRetriesPerRequest: null },
  prefix: required('REDIS_PREFIX'),
  concurrency,
});
worker.on('error', (error) => console.error(error));
worker.waitUntilReady().then(() => console.log('worker started'));
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
