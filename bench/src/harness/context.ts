/** How big a run is: `full` for real figures, `quick` for the smoke test that keeps the harness from rotting. */
export interface BenchContext {
  quick: boolean;
  serverUrl: string;
  /** Seconds per timed load phase. */
  seconds: number;
}

export function scaled(context: BenchContext, full: number, quick: number): number {
  return context.quick ? quick : full;
}
