import { limitHeapGrowth } from '@herald/runtime';

// main.ts imports this first, so the growth factor is in place before the framework and its
// modules fill the heap (as in the api, where setting it later left the first full collection
// waiting for the limit V8 had computed during start-up). See @herald/runtime's heap-growth.ts.
limitHeapGrowth();
