// Test helpers, kept out of the main entry point: import from '@herald/database/dist/testing'.
export * from './testing/config/test-server';
export * from './testing/test-databases';
