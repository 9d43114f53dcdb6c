import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FindById } from './DeliveriesPage';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('find by delivery id, event id or idempotency key', () => {
  const asked: string[] = [];
  beforeEach(() => {
    asked.length = 0;
    sessionStorage.setItem('herald.credential', 'hk_test');
    vi.stubGlobal('fetch', async (request: Request) => {
      const url = new URL(request.url);
      asked.push(`${url.pathname}${url.search}`);
      if (url.pathname === '/application/42/deliveries/dlv_01m89jwvwf9h0mg50j1tdh2yfr') return json(200, { success: true, data: {} });
      if (url.pathname === '/application/42/events' && url.searchParams.get('idempotency_key') === 'call-1')
        return json(200, { success: true, data: [{ id: 'evt_01m89jwvwf9h0mg50j1tdh2yfr' }], next_cursor: null });
      if (url.pathname === '/application/42/events') return json(200, { success: true, data: [], next_cursor: null });
      return json(404, { success: false, error: { code: '404-03', message: 'Not found.' }, request_id: 'r' });
    });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    sessionStorage.clear();
  });

  function renderFind() {
    const router = createMemoryRouter(
      [
        { path: '/', element: <FindById applicationId={42} /> },
        { path: '/applications/42/deliveries/:id', element: <p>Delivery page</p> },
        { path: '/applications/42/events/:id', element: <p>Event page</p> },
      ],
      { initialEntries: ['/'] },
    );
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    );
    return router;
  }

  it('opens a delivery found by its id', async () => {
    const user = userEvent.setup();
    const router = renderFind();
    await user.type(
      screen.getByRole('searchbox', { name: 'Find by delivery id, event id or idempotency key' }),
      'dlv_01m89jwvwf9h0mg50j1tdh2yfr',
    );
    await user.click(screen.getByRole('button', { name: 'Find' }));
    await screen.findByText('Delivery page');
    expect(router.state.location.pathname).toBe('/applications/42/deliveries/dlv_01m89jwvwf9h0mg50j1tdh2yfr');
  });

  it('says so when no delivery has the id', async () => {
    const user = userEvent.setup();
    renderFind();
    await user.type(screen.getByRole('searchbox'), 'dlv_00000000000000000000000000');
    await user.click(screen.getByRole('button', { name: 'Find' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'No delivery, event or idempotency key here is dlv_00000000000000000000000000.',
    );
  });

  it('looks anything else up as an idempotency key', async () => {
    const user = userEvent.setup();
    const router = renderFind();
    await user.type(screen.getByRole('searchbox'), 'call-1');
    await user.click(screen.getByRole('button', { name: 'Find' }));
    await screen.findByText('Event page');
    expect(router.state.location.pathname).toBe('/applications/42/events/evt_01m89jwvwf9h0mg50j1tdh2yfr');
    expect(asked).toContain('/application/42/events?idempotency_key=call-1&limit=1');
  });
});
