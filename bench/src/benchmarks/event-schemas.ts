import { BenchContext, scaled } from '../harness/context';
import { alternatedRounds, heraldDelivery, WORKER_ENV } from '../harness/delivery-load';
import { BenchResult, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { round } from '../harness/stats';

const ENFORCED = 'bench.schema_enforced';
const UNCHECKED = 'bench.schema_none';

/**
 * A 20-property schema of the kind a contact-center platform writes: required ids with
 * patterns, enums, bounded integers and strings, a nested object and an array. Every property
 * is checked on every publish.
 */
export const TWENTY_PROPERTY_SCHEMA = {
  type: 'object',
  required: ['call_id', 'agent_id', 'queue', 'direction', 'started_at', 'seconds'],
  additionalProperties: false,
  properties: {
    call_id: { type: 'string', pattern: '^c-[0-9]+$', maxLength: 64 },
    agent_id: { type: 'string', pattern: '^a-[0-9]+$', maxLength: 64 },
    queue: { type: 'string', minLength: 1, maxLength: 64 },
    direction: { enum: ['inbound', 'outbound'] },
    started_at: { type: 'string', maxLength: 40 },
    seconds: { type: 'integer', minimum: 0, maximum: 86_400 },
    wrap_up_seconds: { type: 'integer', minimum: 0, maximum: 3_600 },
    hold_seconds: { type: 'integer', minimum: 0 },
    transfers: { type: 'integer', minimum: 0, maximum: 100 },
    campaign_id: { type: ['string', 'null'], maxLength: 64 },
    customer_id: { type: 'string', maxLength: 64 },
    language: { type: 'string', pattern: '^[a-z]{2}(-[A-Z]{2})?$' },
    recorded: { type: 'boolean' },
    satisfaction: { type: 'number', minimum: 0, maximum: 5 },
    disposition: { enum: ['resolved', 'callback', 'escalated', 'abandoned'] },
    tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 32 } },
    team: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    channel: { enum: ['voice', 'chat', 'email'] },
    priority: { type: 'integer', minimum: 1, maximum: 5 },
    notes: { type: 'string', maxLength: 2_000 },
  },
};

/** A payload with all 20 properties, valid against TWENTY_PROPERTY_SCHEMA. */
export function payload(i: number): Record<string, unknown> {
  return {
    call_id: `c-${i}`,
    agent_id: `a-${i % 97}`,
    queue: 'support-eu',
    direction: i % 2 ? 'inbound' : 'outbound',
    started_at: '2026-11-25T10:00:00.000Z',
    seconds: i % 300,
    wrap_up_seconds: i % 60,
    hold_seconds: i % 30,
    transfers: i % 3,
    campaign_id: null,
    customer_id: `cust-${i % 1000}`,
    language: 'en-GB',
    recorded: true,
    satisfaction: 4.5,
    disposition: 'resolved',
    tags: ['vip', 'renewal'],
    team: { id: 't-1', name: 'Tier 1' },
    channel: 'voice',
    priority: 2,
    notes: 'Customer asked about the renewal date.',
  };
}

/**
 * PRODUCT.md §15's cost: single publishes of an event type that enforces a 20-property schema,
 * against the same payloads of a type without one, in alternated rounds on the same api and
 * worker (keyed-publishes' shape). The figure is the publishing rate, where the check runs; the
 * delivery rate, first publish to last receipt, is beside it.
 */
export async function eventSchemas(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 10_000, 300);
  const sink = await new BenchSink().start();
  const { environment, client, tenant } = await heraldDelivery(context, sink);
  try {
    for (const eventType of [{ name: ENFORCED, schema: TWENTY_PROPERTY_SCHEMA, enforce: true, example: payload(1) }, { name: UNCHECKED }]) {
      const res = await client.call('POST', '/admin/event_types', eventType);
      if (res.status !== 201) throw new Error(`creating ${eventType.name} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    for (const application of tenant.applicationIds) {
      for (const event of [ENFORCED, UNCHECKED]) {
        const res = await client.call(
          'PUT',
          `/application/${application}/webhook/subscription/${event}`,
          { ensure_delivery: true },
          tenant.key,
        );
        if (res.status !== 200) throw new Error(`subscribing to ${event} answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
    }
    await environment.startWorker(WORKER_ENV);
    const publishAs = (event: string) => async (i: number) => {
      const application = tenant.applicationIds[i % tenant.applicationIds.length];
      const res = await client.call('POST', `/application/${application}/events`, { event, payload: payload(i) }, tenant.key);
      if (res.status !== 202) throw new Error(`publishing ${event} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return [res.body.data.id as string];
    };
    const rates = await alternatedRounds(sink, events, {
      baseline: { label: 'no schema', publish: publishAs(UNCHECKED) },
      measured: { label: 'enforced schema', publish: publishAs(ENFORCED) },
    });
    const publishRatio = rates.measured.publishRate / rates.baseline.publishRate;
    const deliveryRatio = rates.measured.rate / rates.baseline.rate;
    return writeResult({
      name: 'event-schemas',
      description: `${events} single publishes of a type enforcing a 20-property schema against the same payloads of a type without one (two alternated rounds each)`,
      figures: [
        {
          metric: 'publishes, schema enforced',
          value: Math.round(rates.measured.publishRate),
          unit: 'events/s',
          baseline: { name: 'the same publishes without a schema', value: Math.round(rates.baseline.publishRate) },
          ratio: round(publishRatio, 3),
          target: '>= 90% of baseline',
          pass: publishRatio >= 0.9,
        },
        {
          metric: 'deliveries, schema enforced',
          value: Math.round(rates.measured.rate),
          unit: '/s',
          baseline: { name: 'the same without a schema', value: Math.round(rates.baseline.rate) },
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
