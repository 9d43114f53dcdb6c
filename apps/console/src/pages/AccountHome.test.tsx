import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccountHome } from './AccountHome';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const ACCOUNT = 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w';
const application = (id: number, name: string) => ({ id, name, account_id: ACCOUNT });

describe("an account key's applications (GET /applications)", () => {
  const requests: { url: string; authorization: string | null }[] = [];
  let answer: (url: URL) => Response;
  beforeEach(() => {
    requests.length = 0;
    sessionStorage.setItem('herald.credential', 'hk_account');
    vi.stubGlobal('fetch', async (request: Request) => {
      const url = new URL(request.url);
      requests.push({ url: `${request.method} ${url.pathname}${url.search}`, authorization: request.headers.get('authorization') });
      return answer(url);
    });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    sessionStorage.clear();
  });

  function renderPage() {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <MemoryRouter initialEntries={['/']}>
          <Routes>
            <Route path="/" element={<AccountHome />} />
            <Route path="/applications/:applicationId/webhook" element={<p>Webhook page</p>} />
          </Routes>
        </MemoryRouter>
      </QueryClientProvider>,
    );
  }

  it('lists them as links by id, pages on with the cursor, and opens one', async () => {
    const user = userEvent.setup();
    const health = { disabled_at: null, disabled_reason: null, failing_since: null, last_success_at: null };
    answer = (url) => {
      // Each application's endpoint state, for the list's trouble badges.
      if (url.pathname === '/application/7/webhook/status')
        return json(200, {
          success: true,
          data: { ...health, state: 'active', failing_since: '2026-11-25T10:00:00Z', consecutive_failures: 90 },
        });
      if (url.pathname === '/application/42/webhook/status')
        return json(404, { success: false, error: { code: '404-02', message: 'Webhook not configured.' }, request_id: 'r' });
      if (url.pathname === '/application/57/webhook/status')
        return json(200, { success: true, data: { ...health, state: 'disabled', disabled_reason: 'manual', consecutive_failures: 0 } });
      return url.searchParams.get('cursor') === '42'
        ? json(200, { success: true, data: [application(57, 'Billing')], next_cursor: null })
        : json(200, { success: true, data: [application(7, 'Sales US'), application(42, 'Support EU')], next_cursor: '42' });
    };
    renderPage();

    expect((await screen.findByRole('link', { name: /Application 7\b/ })).textContent).toBe('Application 7 Sales US');
    expect(screen.getByRole('link', { name: /Application 42\b/ }).getAttribute('href')).toBe('/applications/42/webhook');
    expect(screen.queryByRole('textbox')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'More applications' }));
    await screen.findByRole('link', { name: /Application 57\b/ });
    expect(screen.queryByRole('button', { name: 'More applications' })).toBeNull();
    // Trouble shows on the list itself, and nothing when all is well.
    await screen.findByText('failing: 90 failures in a row');
    await screen.findByText('no webhook');
    await screen.findByText('endpoint disabled');
    expect(requests.filter((r) => r.url.startsWith('GET /applications'))).toEqual([
      { url: 'GET /applications?limit=50', authorization: 'hk_account' },
      { url: 'GET /applications?limit=50&cursor=42', authorization: 'hk_account' },
    ]);

    await user.click(screen.getByRole('link', { name: /Application 42\b/ }));
    await screen.findByText('Webhook page');
  });

  it('says so when the account has none', async () => {
    answer = () => json(200, { success: true, data: [], next_cursor: null });
    renderPage();
    await screen.findByText(/This account has no applications yet/);
    expect(screen.queryByRole('link')).toBeNull();
  });

  it("shows the API's error with its code", async () => {
    answer = () =>
      json(403, { success: false, error: { code: '403-02', message: 'The API key is unknown or has been revoked.' }, request_id: 'r' });
    renderPage();
    expect((await screen.findByRole('alert')).textContent).toBe('The API key is unknown or has been revoked. 403-02');
  });
});
