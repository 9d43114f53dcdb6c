export * from './config/herald-config';
export * from './credentials/api-keys';
export * from './credentials/webhook-secrets';
export * from './destinations/destination-policy';
export * from './event-types/event-type-name';
export * from './ids/id-generator';
export * from './retry/retry-policy';
export * from './time/clock';
