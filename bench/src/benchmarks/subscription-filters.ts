import { checkFilter } from '@herald/core';
import { BenchContext, scaled } from '../harness/context';
import { alternatedRounds, heraldDelivery, WORKER_ENV } from '../harness/delivery-load';
import { BenchResult, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { round } from '../harness/stats';
import { payload } from './event-schemas';

const FILTERED = 'bench.filtered';
const UNFILTERED = 'bench.unfiltered';

/**
 * Ten conditions of the kind a receiver's owner writes (PRODUCT.md §14): equality on a field and
 * a nested path, an array holding a value, `$in`, a range, `$exists`, `$ne` inside an `$or`.
 * Every payload of the run passes it, so both sides deliver every event and only the filter differs.
 */
export const TEN_CONDITION_FILTER = {
  queue: 'support-eu',
  direction: { $in: ['inbound', 'outbound'] },
  seconds: { $gte: 0, $lt: 86_400 },
  agent_id: { $exists: true },
  'team.id': 't-1',
  tags: 'vip',
  priority: { $lte: 5 },
  $or: [{ disposition: 'resolved' }, { channel: { $ne: 'email' } }],
};

/**
 * PRODUCT.md §14's cost: single publishes to a subscription whose filter has 10 conditions,
 * against the same payloads to a subscription without one, in alternated rounds on the same api
 * and worker (event-schemas' shape). The figure is the publishing rate, where the filter runs.
 */
export async function subscriptionFilters(context: BenchContext): Promise<BenchResult> {
  const checked = checkFilter(TEN_CONDITION_FILTER);
  if (!checked.ok || !checked.matches(payload(1))) throw new Error('the bench filter must be valid and pass its payloads');
  const events = scaled(context, 10_000, 300);
  const sink = await new BenchSink().start();
  const { environment, client, tenant } = await heraldDelivery(context, sink);
  try {
    for (const name of [FILTERED, UNFILTERED]) {
      const res = await client.call('POST', '/admin/event_types', { name });
      if (res.status !== 201) throw new Error(`creating ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    for (const application of tenant.applicationIds) {
      for (const event of [FILTERED, UNFILTERED]) {
        const subscription = `/application/${application}/webhook/subscription/${event}`;
        const res = await client.call('PUT', subscription, { ensure_delivery: true }, tenant.key);
        if (res.status !== 200) throw new Error(`subscribing to ${event} answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
      const res = await client.call(
        'PUT',
        `/application/${application}/webhook/subscription/${FILTERED}/filter`,
        { filter: TEN_CONDITION_FILTER },
        tenant.key,
      );
      if (res.status !== 200) throw new Error(`setting the filter answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    await environment.startWorker(WORKER_ENV);
    const publishAs = (event: string) => async (i: number) => {
      const application = tenant.applicationIds[i % tenant.applicationIds.length];
      const res = await client.call('POST', `/application/${application}/events`, { event, payload: payload(i) }, tenant.key);
      if (res.status !== 202) throw new Error(`publishing ${event} answered ${res.status}: ${JSON.stringify(res.body)}`);
      if (res.body.data.deliveries.length !== 1) throw new Error(`publishing ${event} made no delivery: ${JSON.stringify(res.body)}`);
      return [res.body.data.id as string];
    };
    const rates = await alternatedRounds(sink, events, {
      baseline: { label: 'no filter', publish: publishAs(UNFILTERED) },
      measured: { label: '10-condition filter', publish: publishAs(FILTERED) },
    });
    const publishRatio = rates.measured.publishRate / rates.baseline.publishRate;
    const deliveryRatio = rates.measured.rate / rates.baseline.rate;
    return writeResult({
      name: 'subscription-filters',
      description: `${events} single publishes to a subscription with a 10-condition payload filter against the same payloads to one without (two alternated rounds each)`,
      figures: [
        {
          metric: 'publishes, 10-condition filter',
          value: Math.round(rates.measured.publishRate),
          unit: 'events/s',
          baseline: { name: 'the same publishes without a filter', value: Math.round(rates.baseline.publishRate) },
          ratio: round(publishRatio, 3),
          target: '>= 90% of baseline',
          pass: publishRatio >= 0.9,
        },
        {
          metric: 'deliveries, 10-condition filter',
          value: Math.round(rates.measured.rate),
          unit: '/s',
          baseline: { name: 'the same without a filter', value: Math.round(rates.baseline.rate) },
          ratio: round(deliveryRatio, 3),
        },
      ],
    });
  } finally {
    await client.close();
    await environment.dispose();
    await sink.close();
  }
}
