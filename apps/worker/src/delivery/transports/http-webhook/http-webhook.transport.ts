import { HERALD_VERSION, signatureHeader, webhookBody } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { DeliverableContext, DeliveryTransport, TransportAttempt } from '../delivery-transport';
import { WebhookSender } from './webhook-sender';

/**
 * The application's webhook (PRODUCT.md §5.3): a Standard Webhooks POST — the customer's
 * headers, then `webhook-id`, `webhook-timestamp` and a signature per valid secret — sent by
 * WebhookSender through the connector that refuses internal addresses.
 */
@Injectable()
export class HttpWebhookTransport implements DeliveryTransport {
  readonly kind = 'webhook' as const;

  constructor(private readonly sender: WebhookSender) {}

  async send(context: DeliverableContext, startedAt: Date, shutdown: AbortSignal): Promise<TransportAttempt> {
    const { webhook, event } = context;
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const body = webhookBody(event);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `Herald/${HERALD_VERSION}`,
      ...webhook.headers,
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(context.secrets, event.id, timestamp, body),
    };
    return {
      result: await this.sender.send({ url: webhook.url, headers, body }, shutdown),
      target: webhook.url,
      requestHeaders: headers,
    };
  }
}
