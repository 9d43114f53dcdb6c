import TestAgent from 'supertest/lib/agent';
import { ADMIN_KEY } from './test-app';

export interface Tenant {
  accountId: string;
  applicationId: number;
  key: string;
}

export const VALID_WEBHOOK = {
  url: 'https://example.com/hooks/herald',
  retry_enabled: 1,
  retry_config: { retry_value: 30, max_retries: 5, backoff_type: 'multiplier', backoff_value: 2 },
  headers: { 'X-Api-Token': 'secret-token' },
} as const;

/** Builds test data through the admin API, the way an operator would. */
export class Fixtures {
  private nextApplicationId = 1000 + Math.floor(Math.random() * 1000) * 1000;

  constructor(private readonly http: TestAgent) {}

  async account(name = 'Test account'): Promise<string> {
    const res = await this.http.post('/admin/accounts').set('Authorization', ADMIN_KEY).send({ name });
    expectCreated(res, 'account');
    return res.body.data.id;
  }

  async application(accountId: string, id = this.nextApplicationId++): Promise<number> {
    const res = await this.http
      .post('/admin/applications')
      .set('Authorization', ADMIN_KEY)
      .send({ id, name: `Application ${id}`, account_id: accountId });
    expectCreated(res, 'application');
    return res.body.data.id;
  }

  async apiKey(accountId: string): Promise<{ id: string; key: string }> {
    const res = await this.http.post('/admin/api_keys').set('Authorization', ADMIN_KEY).send({ account_id: accountId, name: 'test' });
    expectCreated(res, 'api key');
    return { id: res.body.data.id, key: res.body.data.key };
  }

  /** An account with one application and one account key. */
  async tenant(): Promise<Tenant> {
    const accountId = await this.account();
    const applicationId = await this.application(accountId);
    const { key } = await this.apiKey(accountId);
    return { accountId, applicationId, key };
  }

  /** A tenant whose application already has the VALID_WEBHOOK configuration. */
  async tenantWithWebhook(webhook: object = VALID_WEBHOOK): Promise<Tenant> {
    const tenant = await this.tenant();
    const res = await this.http.put(`/application/${tenant.applicationId}/webhook`).set('Authorization', tenant.key).send(webhook);
    if (res.status !== 200) throw new Error(`configuring the webhook failed: ${res.status} ${JSON.stringify(res.body)}`);
    return tenant;
  }
}

function expectCreated(res: { status: number; body: unknown }, what: string): void {
  if (res.status !== 201) throw new Error(`creating the ${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
}
