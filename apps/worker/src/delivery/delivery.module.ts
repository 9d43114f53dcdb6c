import { DestinationPolicy, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { Module } from '@nestjs/common';
import { Agent } from 'undici';
import { DeliveryAttempt } from './delivery-attempt';
import { DeliveryLoop } from './delivery-loop';
import { DELIVERY_TRANSPORTS, DeliveryTransport } from './transports/delivery-transport';
import { HttpWebhookTransport } from './transports/http-webhook/http-webhook.transport';
import { createProxiedConnector, createSafeConnector } from './transports/http-webhook/safe-connector';
import { WebhookSender } from './transports/http-webhook/webhook-sender';

@Module({
  providers: [
    {
      provide: WebhookSender,
      inject: [HERALD_CONFIG],
      useFactory: (config: HeraldConfig) => {
        const { delivery } = config;
        const timeoutMs = delivery.timeoutSeconds * 1000;
        const policy = new DestinationPolicy(delivery.allowedTargetCidrs);
        const connectTimeoutMs = delivery.connectTimeoutSeconds * 1000;
        const agent = new Agent({
          connect: delivery.egressProxy
            ? createProxiedConnector(policy, connectTimeoutMs, delivery.egressProxy)
            : createSafeConnector(policy, connectTimeoutMs),
          connections: delivery.hostConcurrency,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          keepAliveTimeout: 4_000,
          keepAliveMaxTimeout: 60_000,
        });
        return new WebhookSender(agent, timeoutMs);
      },
    },
    {
      // One entry per destination kind; DeliveryAttempt picks by kind. The operator's endpoint
      // gets the same signed POST as an application's webhook (PRODUCT.md §10).
      provide: DELIVERY_TRANSPORTS,
      inject: [WebhookSender],
      useFactory: (sender: WebhookSender) => {
        const transports: DeliveryTransport[] = [
          new HttpWebhookTransport(sender, 'webhook'),
          new HttpWebhookTransport(sender, 'operational'),
        ];
        return new Map(transports.map((transport) => [transport.kind, transport]));
      },
    },
    DeliveryAttempt,
    DeliveryLoop,
  ],
  exports: [DeliveryLoop],
})
export class DeliveryModule {}
