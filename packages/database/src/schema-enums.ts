import type { ApiKeyScope, BackoffType, DeliveryDestination, DeliveryStatus, WebhookState } from '@herald/core';
import type * as Schema from './generated/prisma/enums';

/**
 * prisma/schema.prisma cannot import core's value lists, so its enums repeat them; this fails
 * the build when a value is added or removed on one side only.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;

export type SchemaEnumsMatchCore = [
  Holds<Same<DeliveryStatus, Schema.DeliveryStatus>>,
  Holds<Same<BackoffType, Schema.BackoffType>>,
  Holds<Same<ApiKeyScope, Schema.ApiKeyScope>>,
  Holds<Same<WebhookState, Schema.WebhookState>>,
  Holds<Same<DeliveryDestination, Schema.DeliveryDestination>>,
];
