/**
 * What kind of failure a database error is, whichever road it came by: Prisma's query engine
 * (P-codes), a raw query through the driver adapter, or `pg` itself.
 *
 * Prisma's errors are recognised by their class names, not with `instanceof`: importing the
 * generated client here would load Prisma into every process that classifies an error — the
 * worker's retention job included, which must never load it (ARCHITECTURE.md).
 */
export type DatabaseFailure = 'unique_violation' | 'foreign_key_violation' | 'unavailable' | 'other';

const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'DatabaseDoesNotExist',
  'TooManyConnections',
]);
const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection (is )?closed/i,
  /terminating connection/i,
  /the database system is (starting up|shutting down)/i,
  /Can't reach database server/i,
];

export function classifyDatabaseError(error: unknown): DatabaseFailure {
  for (const candidate of causeChain(error)) {
    if (isPrismaError(candidate, 'PrismaClientKnownRequestError')) {
      if (candidate.code === 'P2002') return 'unique_violation';
      if (candidate.code === 'P2003') return 'foreign_key_violation';
      if (candidate.code === 'P1001' || candidate.code === 'P1017') return 'unavailable';
      const adapterKind = adapterErrorKind(candidate.meta);
      if (adapterKind === 'UniqueConstraintViolation') return 'unique_violation';
      if (adapterKind === 'ForeignKeyConstraintViolation') return 'foreign_key_violation';
      if (adapterKind && UNAVAILABLE_ADAPTER_KINDS.has(adapterKind)) return 'unavailable';
    }
    if (isPrismaError(candidate, 'PrismaClientInitializationError')) return 'unavailable';
    if (typeof candidate === 'object' && candidate !== null) {
      const { code, kind, message } = candidate as { code?: unknown; kind?: unknown; message?: unknown };
      if (code === '23505' || kind === 'UniqueConstraintViolation') return 'unique_violation';
      if (code === '23503' || kind === 'ForeignKeyConstraintViolation') return 'foreign_key_violation';
      if (typeof code === 'string' && (UNAVAILABLE_NODE_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P03')) {
        return 'unavailable';
      }
      if (typeof kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return 'unavailable';
      if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) {
        return 'unavailable';
      }
    }
  }
  return 'other';
}

/**
 * Whether PostgreSQL refused the data itself (SQLSTATE class 22, data exception, or 23,
 * integrity constraint violation): the kind of failure one row of a batch can cause alone.
 */
export function isDataError(error: unknown): boolean {
  for (const candidate of causeChain(error)) {
    const code = (candidate as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}

function isPrismaError(
  candidate: unknown,
  name: 'PrismaClientKnownRequestError' | 'PrismaClientInitializationError',
): candidate is Error & { code?: string; meta?: unknown } {
  return candidate instanceof Error && candidate.name === name;
}

function adapterErrorKind(meta: unknown): string | undefined {
  const cause = (meta as { driverAdapterError?: { cause?: { kind?: unknown } } } | undefined)?.driverAdapterError?.cause;
  return typeof cause?.kind === 'string' ? cause.kind : undefined;
}

function* causeChain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    yield current;
    const next = current as { cause?: unknown; errors?: unknown[] };
    if (Array.isArray(next.errors)) yield* next.errors;
    current = next.cause;
  }
}
