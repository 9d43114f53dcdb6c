import { PublishEventRequest } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { CallHandler, ExecutionContext, NestInterceptor, Post, UseInterceptors } from '@nestjs/common';
import { ApplicationController } from '../src/common/access/application-controller.decorator';
import { OwnedApplication } from '../src/common/access/application-access.guard';
import { directRoute, registerDirectRoutes } from '../src/common/http/direct-routes';
import { ErrorResponder } from '../src/common/errors/app-exception.filter';
import { RouteTable } from '../src/common/http/route-table';
import { acceptPublishBody } from '../src/events/publish-routes';
import { expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { createTestApp, TestApp } from './support/test-app';

/** Counts the requests Nest's pipeline runs for, by route. */
class CountingInterceptor implements NestInterceptor {
  readonly seen: string[] = [];
  intercept(context: ExecutionContext, next: CallHandler) {
    const request = context.switchToHttp().getRequest<{ method: string; routeOptions: { url: string } }>();
    this.seen.push(`${request.method} ${request.routeOptions.url}`);
    return next.handle();
  }
}

describe('direct routes: the publish routes past Nest’s pipeline (issue 21, item 2)', () => {
  let t: TestApp;
  let tenant: Tenant;
  const interceptor = new CountingInterceptor();

  beforeAll(async () => {
    t = await createTestApp({ beforeInit: (app) => app.useGlobalInterceptors(interceptor) });
    tenant = await t.fixtures.tenantWithWebhook();
    await t.http
      .put(`/application/${tenant.applicationId}/webhook/subscription/acw_start`)
      .set({ Authorization: tenant.key })
      .send({ ensure_delivery: true })
      .expect(200);
  });
  afterAll(() => t.close());

  it('publishes without Nest’s pipeline, which every other route still runs', async () => {
    const app = `/application/${tenant.applicationId}`;
    interceptor.seen.length = 0;
    const single = await t.http
      .post(`${app}/events`)
      .set({ Authorization: tenant.key })
      .send({ event: 'acw_start', payload: { n: 1 } });
    const batch = await t.http
      .post(`${app}/events/batch`)
      .set({ Authorization: tenant.key })
      .send({ events: [{ event: 'acw_start', payload: { n: 2 }, idempotency_key: 'k-2' }] });
    const listed = await t.http.get(`${app}/events`).set({ Authorization: tenant.key });

    expect(single.status).toBe(202);
    expect(single.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(single.body).toEqual({
      success: true,
      data: { id: expect.stringMatching(/^evt_/), event: 'acw_start', deliveries: [expect.stringMatching(/^dlv_/)] },
    });
    expect(batch.status).toBe(202);
    expect(batch.body.data).toHaveLength(1);
    expect(listed.body.data.map((event: { id: string }) => event.id)).toEqual([batch.body.data[0].id, single.body.data.id]);
    expect(interceptor.seen).toEqual(['GET /application/:application_id/events']);
  });

  it('answers its errors as every route does: the rules are the guards’ and the DTO’s own', async () => {
    const app = `/application/${tenant.applicationId}`;
    interceptor.seen.length = 0;
    const post = (path: string, body: unknown, key: string | null = tenant.key) => {
      const req = t.http.post(path);
      return (key === null ? req : req.set({ Authorization: key })).send(body as object);
    };
    expectError(await post(`${app}/events`, { event: 'acw_start', payload: {} }, null), 403, '403-01');
    expectError(await post(`${app}/events`, { event: 'acw_start', payload: {} }, 'hk_unknown'), 403, '403-02');
    expectError(await post('/application/0/events', { event: 'acw_start', payload: {} }), 400, '400-03');
    expectError(await post('/application/999999/events', { event: 'acw_start', payload: {} }), 404, '404-01');
    const invalid = await post(`${app}/events`, { event: 'acw_start', payload: [] });
    expectError(invalid, 400, '400-02');
    expect(invalid.body.error.details).toEqual([{ field: 'payload', message: 'payload must be a JSON object' }]);
    expectError(await post(`${app}/events/batch`, { events: [] }), 400, '400-02');
    expectError(await post(`${app}/events`, { event: 'no_such_type', payload: {} }), 400, '400-04');
    expect(interceptor.seen).toEqual([]);
  });
});

describe('direct routes: what they refuse to skip', () => {
  it('refuses to start when a direct route’s controller declares an interceptor it would skip', async () => {
    @ApplicationController('probe', { tag: 'probe' })
    @UseInterceptors(CountingInterceptor)
    class InterceptedController {
      @Post()
      async publish(@OwnedApplication() scope: ApplicationScope): Promise<unknown> {
        return { id: scope.applicationId };
      }
    }
    const route = directRoute(InterceptedController, 'publish', PublishEventRequest, acceptPublishBody);
    await expect(
      createTestApp({
        controllers: [InterceptedController],
        beforeInit: (app) => {
          const fastify = app.getHttpAdapter().getInstance();
          registerDirectRoutes(app, fastify, new ErrorResponder(new RouteTable(), console), [route]);
        },
      }),
    ).rejects.toThrow('InterceptedController.publish cannot be a direct route');
  });
});
