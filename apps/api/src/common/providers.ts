import { Clock, DestinationPolicy, HeraldConfig, IdGenerator, systemClock, UlidIdGenerator } from '@herald/core';
import { Global, Module } from '@nestjs/common';
import { HERALD_CONFIG } from '../config/config.module';

export const CLOCK = Symbol('CLOCK');
export const ID_GENERATOR = Symbol('ID_GENERATOR');

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
