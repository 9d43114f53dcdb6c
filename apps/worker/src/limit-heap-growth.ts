import { limitHeapGrowth } from '@herald/runtime';

// main.ts imports this first, so the growth factor is in place before the framework and its
// modules fill the heap: set later, the allocation limit V8 computed during start-up still let
// the first full collection wait until the api had reached ~203 MB (249 MB without the factor,
// 169 MB when it is on the command line). See @herald/runtime's heap-growth.ts.
limitHeapGrowth();
