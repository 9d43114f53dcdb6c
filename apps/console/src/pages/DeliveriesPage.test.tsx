import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeliveriesPage } from './DeliveriesPage';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * The log's status counts beside its rows (issue 20's eighth sitting): the rows' newest page is
 * polled every 2 s, and the counts are read right after a read of it: at once when the rows
 * changed, every third read when they did not. Real timers: the polls' own pace is what is tested.
 */
describe("the delivery log's counts", () => {
  let status: 'pending' | 'sending' = 'pending';
  const reads = { rows: 0, counts: 0 };
  /** How many reads of the counts there had been as each read of the rows came. */
  const countsAtRowsRead: number[] = [];
  beforeEach(() => {
    status = 'pending';
    reads.rows = 0;
    reads.counts = 0;
    countsAtRowsRead.length = 0;
    sessionStorage.setItem('herald.credential', 'hk_test');
    // jsdom has no layout: the page asks whether the window is wide.
    vi.stubGlobal('matchMedia', (media: string) => ({ matches: true, media, addEventListener() {}, removeEventListener() {} }));
    vi.stubGlobal('fetch', async (request: Request) => {
      const url = new URL(request.url);
      if (url.pathname === '/application/42/deliveries/counts') {
        reads.counts++;
        const none = { pending: 0, sending: 0, paused: 0, succeeded: 0, failed: 0, cancelled: 0 };
        return json(200, { success: true, data: { ...none, [status]: 1, total: 1 } });
      }
      if (url.pathname === '/application/42/deliveries') {
        reads.rows++;
        countsAtRowsRead.push(reads.counts);
        // The third read of the rows (the first poll) finds the delivery being sent.
        if (reads.rows === 3) status = 'sending';
        const row = {
          id: 'dlv_01m89jwvwf9h0mg50j1tdh2yfr',
          event_id: 'evt_01m89jwvwf9h0mg50j1tdh2yfr',
          event: 'acw_start',
          status,
          created_at: '2026-11-28T00:00:00.000Z',
          attempt_count: 0,
          next_attempt_at: null,
          last_attempt: null,
        };
        return json(200, { success: true, data: [row], next_cursor: null });
      }
      if (url.pathname === '/event_types') return json(200, { success: true, data: [], next_cursor: null });
      return json(404, { success: false, error: { code: '404-03', message: 'Not found.' }, request_id: 'r' });
    });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    sessionStorage.clear();
  });

  it('reads the counts again when a refresh changes the rows, and not when it brings the same rows', async () => {
    const router = createMemoryRouter([{ path: '/applications/:applicationId/deliveries', element: <DeliveriesPage /> }], {
      initialEntries: ['/applications/42/deliveries'],
    });
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    );
    const statusFilter = await screen.findByRole('group', { name: 'Status' });
    await within(statusFilter).findByRole('button', { name: 'pending 1' });
    expect(reads.counts).toBe(1);
    // The rows' second read (the newest page's own, as the page opens) brings the same row: no
    // read of the counts follows.
    await waitFor(() => expect(reads.rows).toBe(2), { timeout: 3_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reads.counts).toBe(1);
    // The third (its poll, 2 s later) shows it sending: the counts say so with it, at once.
    await waitFor(() => expect(reads.rows).toBe(3), { timeout: 3_000 });
    await within(statusFilter).findByRole('button', { name: 'sending 1' }, { timeout: 500 });
    expect(reads.counts).toBe(2);
    // Unchanged since, the rows are read twice more without the counts, and the third time with
    // them (what changed further down the log): never on a pace of their own.
    await waitFor(() => expect(reads.rows).toBe(6), { timeout: 7_000 });
    await waitFor(() => expect(reads.counts).toBe(3), { timeout: 500 });
    expect(countsAtRowsRead).toEqual([0, 1, 1, 2, 2, 2]);
  }, 20_000);
});
