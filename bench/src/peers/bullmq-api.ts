// BullMQ peer, api process: ingest → Queue.add (the job is in Redis before the 202).
import { Queue } from 'bullmq';
import { PeerEvent, required, serveIngest } from './ingest';

const queue = new Queue<PeerEvent>(required('QUEUE'), {
  connection: { host: '127.0.0.1', port: Number(required('REDIS_PORT')) },
  prefix: required('REDIS_PREFIX'),
});
queue.on('error', (error) => console.error(error));

// The event id is the job id; completed jobs stay in Redis with their result (the delivery record).
serveIngest(async (event) => {
  await queue.add('deliver', event, { jobId: event.id, attempts: 3, backoff: { type: 'fixed', delay: 1_000 } });
});
