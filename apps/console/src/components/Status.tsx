import type { Schemas } from '@herald/client';

/** A delivery's status as its word (PRODUCT.md §12), coloured by a class, never only by colour. */
export function Status({ status }: { status: Schemas['DeliverySummaryDto']['status'] }) {
  return <span className={`status status-${status}`}>{status}</span>;
}
