import { Clock, CLOCK, DestinationPolicy, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, IdGenerator, systemClock, UlidIdGenerator } from '@herald/core';
import { Global, Module } from '@nestjs/common';
import { ApplicationDirectory } from './access/application-directory';
import { ApiKeyCache } from './auth/api-key-cache';
import { ApiKeyRateLimiter } from './rate-limit/api-key-rate-limiter';

/** Time, ids, the destination rules, the request-path caches and the rate limiter, shared by every module. */
@Global()
@Module({
  providers: [
    { provide: CLOCK, useValue: systemClock satisfies Clock },
    { provide: ID_GENERATOR, useFactory: (): IdGenerator => new UlidIdGenerator() },
    {
      provide: DestinationPolicy,
      inject: [HERALD_CONFIG],
      useFactory: (config: HeraldConfig) => new DestinationPolicy(config.delivery.allowedTargetCidrs),
    },
    ApiKeyCache,
    ApiKeyRateLimiter,
    ApplicationDirectory,
  ],
  exports: [CLOCK, ID_GENERATOR, DestinationPolicy, ApiKeyCache, ApiKeyRateLimiter, ApplicationDirectory],
})
export class CommonProvidersModule {}
