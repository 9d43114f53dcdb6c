export * from './ports';
export * from './sink';
export * from './tcp-proxy';
export * from './otlp-receiver';
