import { HERALD_VERSION, signatureHeader, webhookBody, webhookTimestamp } from '@herald/core';
import { DeliverableContext, DeliveryTransport, DestinationKind, TransportAttempt } from '../delivery-transport';
import { WebhookSender } from './webhook-sender';

/**
 * A signed webhook (PRODUCT.md §5.3): a Standard Webhooks POST — the configured headers, then
 * `webhook-id`, `webhook-timestamp` and a signature per valid secret — sent by WebhookSender
 * through the connector that refuses internal addresses. Registered for the application's
 * webhook and for the operator's operational webhook (the context carries either's URL,
 * headers and secret).
 */
export class HttpWebhookTransport implements DeliveryTransport {
  constructor(
    private readonly sender: WebhookSender,
    readonly kind: DestinationKind,
  ) {}

  async send(context: DeliverableContext, startedAt: Date, shutdown: AbortSignal): Promise<TransportAttempt> {
    const { webhook, event } = context;
    const timestamp = webhookTimestamp(startedAt);
    const body = webhookBody(event);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `Herald/${HERALD_VERSION}`,
      ...webhook.headers,
      'webhook-id': event.id,
      'webhook-timestamp': timestamp,
      'webhook-signature': signatureHeader(context.secrets, event.id, Number(timestamp), body),
      // Unsigned (the signature covers id, timestamp and body) and sent only while traces are on.
      ...context.traceHeaders,
    };
    return {
      result: await this.sender.send({ url: webhook.url, headers, body }, shutdown),
      target: webhook.url,
      requestHeaders: headers,
    };
  }
}
