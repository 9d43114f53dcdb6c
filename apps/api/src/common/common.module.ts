import { DestinationPolicy, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { Global, Module } from '@nestjs/common';
import { ApplicationAccess } from './access/application-access.guard';
import { ApplicationDirectory } from './access/application-directory';
import { ApiKeyCache } from './auth/api-key-cache';
import { RequestAuthenticator } from './auth/request-authenticator';
import { AuditTrail } from './audit/audit-trail';
import { ApiKeyRateLimiter } from './rate-limit/api-key-rate-limiter';

/**
 * The destination rules, the request-path caches, the rate limiter, authentication and application
 * access, and the audit trail, shared by
 * every module of the api. Configuration, time and ids come from HeraldRuntimeModule.
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
    ApplicationAccess,
    RequestAuthenticator,
    AuditTrail,
  ],
  exports: [DestinationPolicy, ApiKeyCache, ApiKeyRateLimiter, ApplicationDirectory, ApplicationAccess, RequestAuthenticator, AuditTrail],
})
export class CommonModule {}
