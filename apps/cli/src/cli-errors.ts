/**
 * What `herald` exits with, so scripts can tell the cases apart. The help and the README list
 * the same table.
 */
export const EXIT = {
  OK: 0,
  /** The api answered with an error (or, for start and migrate, the command failed). */
  API_ERROR: 1,
  /** Unknown command or option, a missing or malformed argument: nothing was sent. */
  USAGE: 2,
  /** The api could not be reached (refused, unresolvable, no answer in time). */
  UNREACHABLE: 3,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  the api answered with an error: one line on stderr, "herald: <code> <message>"
  2  usage error (unknown command or option, missing argument): nothing was sent
  3  the api could not be reached at --url`;

/** A failure the operator should read as one line, ending the command with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.USAGE);
  }
}

/** The api answered, with Herald's error envelope (or something that is not Herald's answer). */
export class ApiError extends CliError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code} ${message}`, EXIT.API_ERROR);
  }
}

export class UnreachableError extends CliError {
  constructor(message: string) {
    super(message, EXIT.UNREACHABLE);
  }
}

/** Every run of whitespace (newlines included) as one space: errors are printed on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
