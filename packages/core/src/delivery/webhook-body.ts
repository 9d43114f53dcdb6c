export interface PublishedEvent {
  id: string;
  type: string;
  applicationId: number;
  createdAt: Date;
  /** The payload as stored: compact JSON text. */
  payload: string;
  /** Its ordering key (PRODUCT.md §13); absent from the body when null. */
  orderingKey?: string | null;
}

/**
 * The body a receiver gets (PRODUCT.md §5.3). Built from stored text, so every attempt of an
 * event sends, and signs, the same bytes.
 */
export function webhookBody(event: PublishedEvent): string {
  return (
    `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},` +
    `"application_id":${event.applicationId},"timestamp":${JSON.stringify(event.createdAt.toISOString())},` +
    (event.orderingKey == null ? '' : `"ordering_key":${JSON.stringify(event.orderingKey)},`) +
    `"data":${event.payload}}`
  );
}
