import { HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { DynamicModule, Global, Module } from '@nestjs/common';

/** Provides the configuration parsed once at start-up (main.ts) to everything that needs it. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: HERALD_CONFIG, useValue: config }], exports: [HERALD_CONFIG] };
  }
}
