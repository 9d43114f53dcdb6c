import { DestinationPolicy, ipLiteralHost } from '@herald/core';
import { AppError } from '@herald/contracts';

/**
 * Refuses a URL whose host is an IP literal in a private or reserved range (PRODUCT.md §5.4) with
 * 400-05 naming the field; host names are judged again by the worker at connect time.
 */
export function assertPublicDestination(destinations: DestinationPolicy, url: string): void {
  const ip = ipLiteralHost(url);
  const refusal = ip === null ? null : destinations.refusalReason(ip);
  if (refusal) {
    throw new AppError('URL_NOT_ALLOWED', `The webhook URL's host ${refusal}; Herald only delivers to public addresses.`, {
      details: [{ field: 'url', message: `${refusal}; only public addresses are allowed` }],
    });
  }
}
