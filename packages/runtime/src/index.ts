export * from './herald-runtime.module';
export * from './herald-service';
export * from './logging/logger';
export * from './logging/nest-pino-logger';
export * from './memory/heap-growth';
export * from './tracing/tracing';
