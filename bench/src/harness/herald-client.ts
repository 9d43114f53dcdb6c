import { Pool } from 'undici';
import { ADMIN_KEY } from './environment';

export interface Tenant {
  key: string;
  applicationIds: number[];
}

/** Talks to the api under test: setup through the admin API, like an operator. */
export class HeraldClient {
  readonly pool: Pool;

  constructor(
    readonly url: string,
    connections = 64,
  ) {
    this.pool = new Pool(url, { connections, pipelining: 1 });
  }

  async call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
    key = ADMIN_KEY,
  ): Promise<{ status: number; body: any }> {
    const res = await this.pool.request({
      method,
      path,
      headers: { authorization: key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : null };
  }

  /** One account with `count` applications whose webhooks point at `url`, subscribed to acw_start. */
  async tenant(
    count: number,
    url: string,
    retry: { retry_value: number; max_retries: number } = { retry_value: 1, max_retries: 1 },
  ): Promise<Tenant> {
    const account = await this.expect(201, 'POST', '/admin/accounts', { name: 'bench' });
    const key = (await this.expect(201, 'POST', '/admin/api_keys', { account_id: account.data.id, name: 'bench' })).data.key as string;
    const applicationIds: number[] = [];
    for (let i = 0; i < count; i++) {
      const app = await this.expect(201, 'POST', '/admin/applications', { name: `bench ${i}`, account_id: account.data.id });
      const id = app.data.id as number;
      await this.expect(
        200,
        'PUT',
        `/application/${id}/webhook`,
        {
          url,
          retry_enabled: 1,
          retry_config: { ...retry, backoff_type: 'fixed', backoff_value: 0 },
        },
        key,
      );
      await this.expect(200, 'PUT', `/application/${id}/webhook/subscription/acw_start`, { ensure_delivery: true }, key);
      applicationIds.push(id);
    }
    return { key, applicationIds };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async expect(status: number, method: 'GET' | 'POST' | 'PUT', path: string, body: unknown, key?: string): Promise<any> {
    const res = await this.call(method, path, body, key);
    if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

/** Runs `task` for every item with at most `concurrency` at once. */
export async function inParallel<T>(items: T[], concurrency: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index], index);
      }
    }),
  );
}
