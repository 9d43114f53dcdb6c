import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { act } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebhookPage } from './WebhookPage';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('the webhook form against the API', () => {
  const requests: { method: string; url: string; body: unknown; authorization: string | null }[] = [];
  let answerPut: (body: any) => Response;
  beforeEach(() => {
    requests.length = 0;
    sessionStorage.setItem('herald.credential', 'hk_test');
    vi.stubGlobal('fetch', async (request: Request) => {
      const body = request.method === 'PUT' ? await request.json() : null;
      requests.push({
        method: request.method,
        url: new URL(request.url).pathname,
        body,
        authorization: request.headers.get('authorization'),
      });
      if (request.method === 'GET')
        return json(404, {
          success: false,
          error: { code: '404-02', message: 'Webhook not configured for this application.' },
          request_id: 'req_1',
        });
      return answerPut(body);
    });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    sessionStorage.clear();
  });

  function renderPage() {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    // A data router, as the console's: the form asks before being left (useBlocker needs one).
    const router = createMemoryRouter([{ path: '/applications/:applicationId/webhook', element: <WebhookPage /> }], {
      initialEntries: ['/applications/42/webhook'],
    });
    render(
      <QueryClientProvider client={client}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    );
    return client;
  }

  it("shows each of the API's details beside its field, then saves once fixed", async () => {
    const user = userEvent.setup();
    answerPut = (body) =>
      body.url === 'https://example.com/hook'
        ? json(200, { success: true, data: { ...body, retry_enabled: 1 } })
        : json(400, {
            success: false,
            error: {
              code: '400-02',
              message: 'Validation failed.',
              details: [
                { field: 'url', message: 'url must be an absolute http or https URL' },
                { field: 'headers.Host', message: 'headers.Host is a reserved header' },
              ],
            },
            request_id: 'req_2',
          });
    renderPage();
    const url = await screen.findByRole('textbox', { name: 'Target URL' });
    await user.type(url, 'not a url');
    await user.click(screen.getByRole('button', { name: 'Add header' }));
    await user.type(screen.getByRole('textbox', { name: 'Header 1 name' }), 'Host');
    await user.type(screen.getByRole('textbox', { name: 'Header 1 value' }), 'x');
    await user.click(screen.getByRole('button', { name: 'Save webhook' }));

    await waitFor(() => expect(url.getAttribute('aria-invalid')).toBe('true'));
    expect(document.getElementById(url.getAttribute('aria-describedby')!)?.textContent).toBe('url must be an absolute http or https URL');
    expect(screen.getByText('headers.Host is a reserved header')).toBeTruthy();
    expect(requests.at(-1)).toEqual({
      method: 'PUT',
      url: '/application/42/webhook',
      authorization: 'hk_test',
      body: {
        url: 'not a url',
        retry_enabled: 1,
        retry_config: { retry_value: 30, max_retries: 5, backoff_type: 'multiplier', backoff_value: 2 },
        headers: { Host: 'x' },
      },
    });

    await user.clear(url);
    await user.type(url, 'https://example.com/hook');
    await user.click(screen.getByRole('button', { name: /Remove header 1/ }));
    await user.click(screen.getByRole('button', { name: 'Save webhook' }));
    expect(await screen.findByText('Saved.')).toBeTruthy();
    expect(url.getAttribute('aria-invalid')).toBeNull();
  });

  it('previews the schedule live as the retry fields change, before saving', async () => {
    const user = userEvent.setup();
    renderPage();
    const maxRetries = await screen.findByRole('spinbutton', { name: 'Maximum retries' });
    await user.clear(maxRetries);
    await user.type(maxRetries, '2');
    expect(screen.getByText('2 retries over 1 min 30 s at most.')).toBeTruthy();
    await user.selectOptions(screen.getByRole('combobox', { name: 'Backoff' }), 'fixed');
    expect(screen.getByText('2 retries over 1 min at most.')).toBeTruthy();
    await user.click(screen.getByRole('checkbox', { name: 'Retry failed deliveries' }));
    expect(screen.getByText('One attempt, no retries.')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'PUT')).toEqual([]);
  });

  it('keeps what is being typed when the stored webhook is read again, and drops an old error once edited', async () => {
    const user = userEvent.setup();
    answerPut = () =>
      json(400, {
        success: false,
        error: { code: '400-02', message: 'Validation failed.', details: [{ field: 'url', message: 'url is bad' }] },
        request_id: 'r',
      });
    const client = renderPage();
    const url = await screen.findByRole('textbox', { name: 'Target URL' });
    await user.type(url, 'https://example.com/typed');
    // A refetch hands the form a new copy of the stored configuration: it used to reset the form.
    await act(() => client.invalidateQueries({ queryKey: ['webhook', 42] }));
    await waitFor(() => expect(requests.filter((r) => r.method === 'GET')).toHaveLength(2));
    expect((url as HTMLInputElement).value).toBe('https://example.com/typed');

    await user.click(screen.getByRole('button', { name: 'Save webhook' }));
    await screen.findByRole('alert');
    await user.type(url, '/more');
    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
    expect((url as HTMLInputElement).value).toBe('https://example.com/typed/more');
  });
});
