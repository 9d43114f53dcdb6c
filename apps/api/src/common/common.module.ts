import { DestinationPolicy, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { Global, Module } from '@nestjs/common';
import { ApplicationDirectory } from './access/application-directory';
import { ApiKeyCache } from './auth/api-key-cache';
import { ApiKeyRateLimiter } from './rate-limit/api-key-rate-limiter';

/**
 * The destination rules, the request-path caches and the rate limiter, shared by every module of
 * the api. Configuration, time and ids come from HeraldRuntimeModule.
 */
@Global()
@Module({
  providers: [
    {
      provide: DestinationPolicy,
      inject: [HERALD_CONFIG],
      useFactory: (config: HeraldConfig) => new DestinationPolicy(config.delivery.allowedTargetCidrs),
    },
    ApiKeyCache,
    ApiKeyRateLimiter,
    ApplicationDirectory,
  ],
  exports: [DestinationPolicy, ApiKeyCache, ApiKeyRateLimiter, ApplicationDirectory],
})
export class CommonModule {}
