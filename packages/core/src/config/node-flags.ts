/**
 * The Node flags Herald's api and worker run with: V8 reads them only as the process starts, so
 * they cannot be set from inside it (as heap growth is, in @herald/runtime) and every launcher
 * passes them — `herald start`'s supervisor and the bench on the command line, the container
 * images in NODE_OPTIONS, the packages' `start` scripts.
 *
 * `--max-semi-space-size=16` caps the young generation. Node 24's V8 lets each semi-space grow to
 * 64 MB (128 MB of new space, measured), and under the delivery load the api peaked at 266–277 MB
 * resident and the worker at 211–218 MB, past issue 21's 200 MB. At 16 MB (Node 20's ceiling)
 * they peaked at 191 and 150 MB with throughput within the run's noise (bench/README.md).
 */
export const HERALD_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];

/**
 * The flags of HERALD_NODE_FLAGS to add to a launch, given the flags it already has (on its
 * command line and in NODE_OPTIONS): an operator's own value of a flag wins.
 */
export function heraldNodeFlagsFor(chosen: readonly string[]): string[] {
  const names = new Set(chosen.map(flagName));
  return HERALD_NODE_FLAGS.filter((flag) => !names.has(flagName(flag)));
}

/** A flag's name as V8 compares it: `--max_semi_space_size=8` and `--max-semi-space-size 8` are the same flag. */
function flagName(flag: string): string {
  return flag.split('=')[0].replace(/_/g, '-');
}

/** The flags in a NODE_OPTIONS value (whitespace-separated; Node's quoting is not needed for these). */
export function nodeOptionsFlags(nodeOptions: string | undefined): string[] {
  return (nodeOptions ?? '').split(/\s+/).filter((part) => part.startsWith('-'));
}
