import { HeraldClient } from './herald-client';
import { requestLoad } from './load';

const CONNECTIONS = 32;

/**
 * What recover and retention publish beside the work they measure: POST …/events into one
 * application at half the api's maximum rate, that maximum measured first (autocannon -c 32,
 * after a warm-up), so the publisher loads the api the same way in every run whatever the
 * machine. `publish(i)` sends the i-th event and resolves with its status, for pacedSamples.
 */
export class HalfRatePublisher {
  private constructor(
    private readonly client: HeraldClient,
    private readonly path: string,
    private readonly key: string,
    /** The api's maximum publish rate in this run (requests/s). */
    readonly maximum: number,
    /** Half of it: the paced rate. */
    readonly rate: number,
  ) {}

  static async measure(apiUrl: string, key: string, applicationId: number, seconds: number): Promise<HalfRatePublisher> {
    const path = `/application/${applicationId}/events`;
    const maxLoad = (duration: number) =>
      requestLoad({
        url: apiUrl,
        connections: CONNECTIONS,
        duration,
        requests: [
          { method: 'POST', path, headers: { authorization: key, 'content-type': 'application/json' }, body: JSON.stringify(eventBody(0)) },
        ],
      });
    await maxLoad(Math.min(3, seconds)); // warm-up
    const maximum = (await maxLoad(seconds)).requestsPerSecond;
    return new HalfRatePublisher(new HeraldClient(apiUrl, CONNECTIONS), path, key, maximum, Math.max(1, Math.floor(maximum / 2)));
  }

  /** How the figures describe the load. */
  get description(): string {
    return `POST …/events paced open-loop at ${this.rate}/s (half of ${this.maximum}/s, the api's maximum at -c ${CONNECTIONS} in this run)`;
  }

  readonly publish = async (i: number): Promise<number> => (await this.client.call('POST', this.path, eventBody(i), this.key)).status;

  close(): Promise<void> {
    return this.client.close();
  }
}

function eventBody(i: number): object {
  return { event: 'acw_start', payload: { call_id: `p-${i}`, agent_id: `a-${i % 97}`, queue: 'support-eu' } };
}
