import { generateWebhookSecret, HeraldConfig, parseHeraldConfig, RetryPolicy } from '@herald/core';
import {
  ApplicationRepository,
  ApplicationScope,
  DatabaseModule,
  DeliveryLogRepository,
  EventRepository,
  SubscriptionRepository,
  WebhookRepository,
} from '@herald/database';
import { cloneDatabase, Row, sql, TestDatabase, testAudit, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from '../../src/worker.module';

export interface WebhookSetup {
  url: string;
  retryEnabled?: 0 | 1;
  policy?: Partial<RetryPolicy>;
  headers?: Record<string, string>;
  /** Subscriptions to create: event → flags. */
  subscriptions?: Record<string, { ensureDelivery?: boolean; active?: boolean }>;
}

const FAST_POLICY: RetryPolicy = { retryValue: 1, maxRetries: 0, backoffType: 'fixed', backoffValue: 0 };
let nextApplicationId = 10_000 + Math.floor(Math.random() * 1_000) * 100;

/**
 * A worker running in this process on its own cloned database. Fixtures go through the real
 * repositories of a separate database-only context (`app`), so they work while the worker is
 * stopped too.
 */
export class TestWorker {
  private worker: INestApplicationContext | null = null;

  private constructor(
    readonly db: TestDatabase,
    readonly config: HeraldConfig,
    readonly app: INestApplicationContext,
  ) {}

  /** With `runWorker: false`, only the database and fixtures: for tests that run worker processes. */
  static async start(env: NodeJS.ProcessEnv = {}, { runWorker = true } = {}): Promise<TestWorker> {
    const database = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    const config = parseHeraldConfig({
      DATABASE_URL: database.url,
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      HERALD_LOG_LEVEL: 'silent',
      HERALD_DB_POOL_SIZE: '4',
      // Many test workers run at once; worker-metrics.e2e-spec.ts gives its own a port.
      HERALD_WORKER_METRICS_PORT: '0',
      ...env,
    });
    const data = await NestFactory.createApplicationContext(DatabaseModule.forRoot({ url: database.url, poolSize: 4 }), { logger: false });
    const testWorker = new TestWorker(database, config, data);
    if (runWorker) await testWorker.startWorker();
    return testWorker;
  }

  async startWorker(): Promise<void> {
    if (this.worker) return;
    this.worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(this.config), { logger: false });
    await this.worker.init();
  }

  /** A provider of the running worker: to do at the test's moment what a timer would do later. */
  inWorker<T>(token: Type<T>): T {
    if (!this.worker) throw new Error('the worker is not running');
    return this.worker.get(token);
  }

  /** Stops the worker gracefully; the database and the fixtures stay. */
  async stopWorker(): Promise<void> {
    await this.worker?.close();
    this.worker = null;
  }

  async close(): Promise<void> {
    await this.stopWorker();
    await this.app.close();
    await this.db.drop();
  }

  /** An account and application with a webhook and its subscriptions; returns the application's scope. */
  async application(setup: WebhookSetup): Promise<ApplicationScope> {
    const id = nextApplicationId++;
    await this.sql(`INSERT INTO accounts (id, name) VALUES ($1, 'test') ON CONFLICT DO NOTHING`, ['acc_worker_tests']);
    const applications = this.app.get(ApplicationRepository);
    const created = await applications.create({ id, accountId: 'acc_worker_tests', name: `app ${id}` }, testAudit);
    if (typeof created === 'string') throw new Error(`application ${id} not created: ${created}`);
    const scope = applications.scopeOf(created);
    await this.configure(scope, setup);
    for (const [event, flags] of Object.entries(setup.subscriptions ?? { acw_start: { ensureDelivery: true } })) {
      await this.app.get(SubscriptionRepository).upsert(scope, event, flags, testAudit);
    }
    return scope;
  }

  async configure(scope: ApplicationScope, setup: WebhookSetup): Promise<void> {
    const webhooks = this.app.get(WebhookRepository);
    const saved = await webhooks.upsert(
      scope,
      {
        url: setup.url,
        retryEnabled: setup.retryEnabled ?? 1,
        retryPolicy: { ...FAST_POLICY, ...setup.policy },
        headers: setup.headers ?? {},
      },
      await webhooks.find(scope),
      { id: `sec_${nextApplicationId++}`, secret: generateWebhookSecret() },
      testAudit(),
    );
    if (saved === 'changed') throw new Error(`the webhook of application ${scope.applicationId} changed while configuring it`);
  }

  /** Publishes through the same repository the api uses; returns the delivery id (or null). */
  async publish(
    scope: ApplicationScope,
    eventType = 'acw_start',
    payload: object = { n: 1 },
    ignoresSubscription = false,
    orderingKey: string | null = null,
  ): Promise<string | null> {
    const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    const published = await this.app.get(EventRepository).publish(scope, {
      id: `evt_${suffix}`,
      eventType,
      payload: JSON.stringify(payload),
      createdAt: new Date(),
      deliveryId: `dlv_${suffix}`,
      ignoresSubscription,
      filteredOut: false,
      traceContext: null,
      idempotencyKey: null,
      orderingKey,
    });
    if (published.kind !== 'stored') throw new Error(`publish stored nothing: ${published.kind}`);
    return published.record.deliveryIds[0] ?? null;
  }

  async delivery(scope: ApplicationScope, id: string) {
    const delivery = await this.app.get(DeliveryLogRepository).find(scope, id);
    if (!delivery) throw new Error(`no delivery ${id}`);
    return delivery;
  }

  /** Polls until the delivery reaches one of `statuses`. */
  async settled(scope: ApplicationScope, id: string, statuses = ['succeeded', 'failed', 'cancelled'], timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const delivery = await this.delivery(scope, id);
      if (statuses.includes(delivery.status)) return delivery;
      if (Date.now() > deadline) throw new Error(`delivery ${id} still ${delivery.status} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  sql<T extends Row = Row>(text: string, params: unknown[] = []): Promise<T[]> {
    return sql<T>(this.db.url, text, params);
  }
}
