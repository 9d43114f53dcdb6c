// Test helpers, kept out of the main entry point: import from '@herald/database/testing'.
export * from './testing/config/test-server';
export * from './testing/test-databases';
export * from './testing/sql';
export * from './testing/delivery-state';
export * from './testing/audit';
