import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before
 * it collects again, in percent. Left to itself V8 allows up to four times: under the delivery
 * load the api's short-lived request objects that outlive two scavenges piled up to ~150 MB of
 * garbage and the process peaked at 260–300 MB resident with ~50 MB live. At 10% it peaked at
 * 178–185 MB with no loss of throughput measurable on the 2-core machine (bench/README.md,
 * issue 12).
 */
export const HEAP_GROWING_PERCENT = 10;

/** Whether the operator chose a growth factor (on the command line or in NODE_OPTIONS). */
export function heapGrowthChosen(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
}

/**
 * Sets HEAP_GROWING_PERCENT unless the operator chose one. V8 reads the flag at every full
 * collection, so setting it as the process starts takes effect (measured: the api's peak RSS
 * fell the same as with the command-line flag). The api and the worker call it first thing.
 */
export function limitHeapGrowth(): void {
  if (!heapGrowthChosen(process.execArgv, process.env.NODE_OPTIONS)) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
