import { Clock, CLOCK, DestinationPolicy, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, IdGenerator, systemClock, UlidIdGenerator } from '@herald/core';
import { Global, Module } from '@nestjs/common';

/** Time, ids and the destination rules, injected so tests can pin them. */
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
  ],
  exports: [CLOCK, ID_GENERATOR, DestinationPolicy],
})
export class CommonProvidersModule {}
