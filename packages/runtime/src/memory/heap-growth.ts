import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before
 * it collects again, in percent. Left to itself V8 allows up to four times: under the delivery
 * load the api's short-lived request objects that outlive two scavenges piled up to ~150 MB of
 * garbage and the process peaked at 249–301 MB resident with ~50 MB live. At 5%, set before the
 * modules load, it peaked at 173 MB (the worker at 130–138 MB), with no loss of throughput
 * measurable on the 2-core machine (bench/README.md, issue 12).
 */
export const HEAP_GROWING_PERCENT = 5;

/**
 * Whether the process was started with a growth factor of its own (`node --heap-growing-percent=N
 * dist/main.js`, e.g. in a container's command). Node refuses the flag in NODE_OPTIONS, so the
 * command line is the only place an operator can choose one.
 */
export function heapGrowthChosen(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
}

/**
 * Sets HEAP_GROWING_PERCENT unless the process was started with a value of its own. V8 reads the flag whenever it sets the
 * next collection's limit, so it works set at run time, provided that happens before the heap
 * fills: the api and the worker import their `limit-heap-growth.ts` before anything else.
 */
export function limitHeapGrowth(): void {
  if (!heapGrowthChosen(process.execArgv)) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
