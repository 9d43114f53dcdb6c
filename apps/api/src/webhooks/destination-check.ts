import { DestinationPolicy, ipLiteralHost, localhostNameOf } from '@herald/core';
import { AppError } from '@herald/contracts';

/**
 * Refuses a URL whose host is an IP literal in a private or reserved range, or a localhost name
 * (RFC 6761: loopback by definition), with 400-05 naming the field (PRODUCT.md §5.4, §17) —
 * unless the operator allowed loopback. Other host names are judged again by the worker at
 * connect time, since DNS answers change.
 */
export function assertPublicDestination(destinations: DestinationPolicy, url: string): void {
  const refusal = refusalOf(destinations, url);
  if (refusal) {
    throw new AppError('URL_NOT_ALLOWED', `The webhook URL's host ${refusal}; Herald only delivers to public addresses.`, {
      details: [{ field: 'url', message: `${refusal}; only public addresses are allowed` }],
    });
  }
}

function refusalOf(destinations: DestinationPolicy, url: string): string | null {
  const ip = ipLiteralHost(url);
  if (ip !== null) return destinations.refusalReason(ip);
  const localhost = localhostNameOf(url);
  // It reaches 127.0.0.1 or ::1, whichever the worker's resolver gives first.
  if (localhost !== null && !destinations.isAllowed('127.0.0.1') && !destinations.isAllowed('::1')) {
    return `${localhost} is a loopback name (RFC 6761)`;
  }
  return null;
}
