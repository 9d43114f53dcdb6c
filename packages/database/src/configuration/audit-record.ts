import { AuditEntry } from '../audit/audit.sql';
import { Prisma } from '../generated/prisma/client';

// The audit record (audit/audit.sql.ts) in Prisma's form, for the configuration/ repositories that
// make their changes through Prisma: written inside the same $transaction as the change.

/**
 * The record as Prisma's create data, for configuration/ repositories (inside their $transaction).
 * Prisma rebuilds JSON key by key, so a key named `__proto__` would be lost: `changes` fields are
 * prefixed paths (`headers.__proto__`), never that bare name.
 */
export function auditCreateData(entry: AuditEntry): Prisma.AuditRecordUncheckedCreateInput {
  return {
    id: entry.id,
    at: entry.at,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorPrefix: entry.actor.prefix,
    action: entry.action,
    accountId: entry.accountId,
    applicationId: entry.applicationId,
    requestId: entry.requestId,
    changes: entry.changes as Prisma.InputJsonObject,
  };
}

/** The record inside a configuration/ repository's Prisma $transaction; nothing for null. */
export async function createAudit(tx: Prisma.TransactionClient, entry: AuditEntry | null): Promise<void> {
  if (entry !== null) await tx.auditRecord.create({ data: auditCreateData(entry), select: { id: true } });
}
