import { infiniteQueryOptions, queryOptions, useQuery } from '@tanstack/react-query';
import { HeraldApiError, type Schemas } from '@herald/client';
import { localInputToIso } from '../lib/time';
import { api, call } from './client';

/**
 * Reads several screens share, under one cache key each: the application header, the trouble
 * banners, the list's badges and the endpoint page all ask for the same things once.
 */

export type DeliveryStatus = Schemas['DeliverySummaryDto']['status'];
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'sending', 'paused', 'succeeded', 'failed', 'cancelled'];

/** The log's filters that the counts and a bulk retry share (status aside). */
export interface LogWindow {
  event?: string;
  since?: string;
  until?: string;
}

/** The log's filters as the address carries them (`?status=failed&event=…&since=…&until=…`). */
export interface LogFilters extends LogWindow {
  status?: DeliveryStatus;
}

/** The filters of a log address; `since`/`until` are the datetime-local inputs' values (local wall time). */
export function logFiltersFrom(params: URLSearchParams): LogFilters {
  return {
    event: params.get('event') || undefined,
    since: localInputToIso(params.get('since') ?? ''),
    until: localInputToIso(params.get('until') ?? ''),
    status: (params.get('status') || undefined) as DeliveryStatus | undefined,
  };
}

export const LOG_PAGE_SIZE = 25;

export function listDeliveries(id: number, filters: LogFilters, cursor?: string) {
  return call(
    api.GET('/application/{application_id}/deliveries', {
      params: { path: { application_id: id }, query: { limit: LOG_PAGE_SIZE, ...definedOnly({ ...filters, cursor }) } },
    }),
  );
}

/**
 * The log's pages under one key, shared by the page and by the first screen's prefetch
 * (first-screen.ts), which must ask for exactly what the page will read.
 */
export function deliveryPagesQuery(id: number, filters: LogFilters) {
  return infiniteQueryOptions({
    queryKey: ['deliveries', id, 'pages', filters],
    queryFn: ({ pageParam }) => listDeliveries(id, filters, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
}

export const overviewKey = (id: number) => ['application', id] as const;
export const webhookStatusKey = (id: number) => ['webhook-status', id] as const;
export const countsKey = (id: number) => ['delivery-counts', id] as const;

/** Shared by the layout and the first screen's prefetch (first-screen.ts). */
export function applicationOverviewQuery(id: number) {
  return queryOptions({
    queryKey: overviewKey(id),
    queryFn: async () => (await call(api.GET('/application/{application_id}', { params: { path: { application_id: id } } }))).data,
    staleTime: 60_000,
    // A refusal the prefetch already received (403, 404) is the answer: asking again on mount
    // would only repeat it.
    retryOnMount: false,
  });
}

export function useApplicationOverview(id: number) {
  return useQuery(applicationOverviewQuery(id));
}

/** The endpoint's state, or null when the application has no webhook yet (404-02 is an answer, not a failure). */
export function useWebhookStatus(id: number, options: { poll?: boolean; enabled?: boolean } = {}) {
  return useQuery({
    queryKey: webhookStatusKey(id),
    queryFn: async () => {
      try {
        return (await call(api.GET('/application/{application_id}/webhook/status', { params: { path: { application_id: id } } }))).data;
      } catch (error) {
        if (error instanceof HeraldApiError && error.code === '404-02') return null;
        throw error;
      }
    },
    refetchInterval: options.poll ? 10_000 : false,
    enabled: options.enabled ?? true,
    staleTime: 10_000,
  });
}

export function useDeliveryCounts(id: number, window: LogWindow = {}, options: { poll?: boolean; enabled?: boolean } = {}) {
  return useQuery({
    queryKey: [...countsKey(id), window.event ?? '', window.since ?? '', window.until ?? ''],
    queryFn: async () =>
      (
        await call(
          api.GET('/application/{application_id}/deliveries/counts', {
            params: { path: { application_id: id }, query: definedOnly(window) },
          }),
        )
      ).data,
    refetchInterval: options.poll ? 5_000 : false,
    enabled: options.enabled ?? true,
  });
}

/** The catalogue's names, with webhook.test (sent by "Send test event", never in the catalogue) once. */
export function useEventTypeNames() {
  const catalogue = useQuery({
    queryKey: ['event-types'],
    queryFn: () => call(api.GET('/event_types', { params: { query: { limit: 100 } } })),
    staleTime: 60_000,
  });
  const names = [...new Set(['webhook.test', ...(catalogue.data?.data.map((t) => t.name) ?? [])])];
  return { names, types: catalogue.data?.data ?? [], error: catalogue.error };
}

/** A query object without its undefined or empty fields (openapi-fetch would send `event=`). */
export function definedOnly<T extends object>(query: T): Partial<T> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined && value !== '')) as Partial<T>;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}
