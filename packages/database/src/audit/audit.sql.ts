import type { AuditAction, AuditActor, AuditActorType, AuditChanges } from '@herald/core';
import { SqlQuery } from '../pg-pool';

/**
 * One audit record (PRODUCT.md §16) as the service that decided the change built it. The
 * repository that makes the change writes it in the same transaction (or statement), so the
 * change and its record commit together or not at all.
 */
export interface AuditEntry {
  id: string;
  at: Date;
  actor: AuditActor;
  action: AuditAction;
  accountId: string | null;
  applicationId: number | null;
  /** The request that made the change; null for Herald's own changes (auto-disable, start-up). */
  requestId: string | null;
  changes: AuditChanges;
}

/**
 * How a service says what to record when what changed is known only inside the repository's
 * transaction (the row it locked, the ids it revoked): the repository calls it there with what it
 * found and stores the entry it returns. Null records nothing: for Herald's own passes that found
 * nothing to change (a request always records, PRODUCT.md §16).
 */
export type AuditOf<T> = (change: T) => AuditEntry | null;

const COLUMNS = 'id, at, actor_type, actor_id, actor_prefix, action, account_id, application_id, request_id, changes';

/** The values of an entry in COLUMNS' order, for `auditValuesSql`'s placeholders. */
export function auditValues(entry: AuditEntry): unknown[] {
  return [
    entry.id,
    entry.at,
    entry.actor.type,
    entry.actor.id,
    entry.actor.prefix,
    entry.action,
    entry.accountId,
    entry.applicationId,
    entry.requestId,
    // The JSON text as built: the pool sends it as is (a header named `__proto__` stays a key).
    JSON.stringify(entry.changes),
  ];
}

/** `$first, …, $first+9`, cast as audit_log's columns, for a statement that also has other parameters. */
function placeholders(first: number): string[] {
  const casts = ['', '::timestamptz', '::audit_actor_type', '', '', '', '', '::int', '', '::json'];
  return casts.map((cast, index) => `$${first + index}${cast}`);
}

/**
 * For a CTE of a statement that makes a change: the record, inserted once per row of `source`
 * (a CTE of the change, so a change that matched nothing records nothing). Its values are
 * parameters `$first` … `$first+9` (auditValues).
 */
export function insertAuditFrom(source: string, first: number): string {
  return `INSERT INTO audit_log (${COLUMNS}) SELECT ${placeholders(first).join(', ')} FROM ${source} LIMIT 1`;
}

/** The record on its own, through a transaction's `sql` (on the pool); nothing for null. */
export async function insertAudit(sql: SqlQuery, entry: AuditEntry | null): Promise<void> {
  if (entry === null) return;
  await sql(`INSERT INTO audit_log (${COLUMNS}) VALUES (${placeholders(1).join(', ')})`, auditValues(entry));
}

/** A stored record, as read back (audit-log.repository.ts). */
export interface AuditRecordRow {
  id: string;
  at: Date;
  actorType: AuditActorType;
  actorId: string;
  actorPrefix: string | null;
  action: AuditAction;
  accountId: string | null;
  applicationId: number | null;
  requestId: string | null;
  changes: unknown;
}

export const AUDIT_ROW_COLUMNS = `id, at, actor_type AS "actorType", actor_id AS "actorId", actor_prefix AS "actorPrefix", action,
  account_id AS "accountId", application_id AS "applicationId", request_id AS "requestId", changes`;

export function toAuditEntry(row: AuditRecordRow): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    actor: { type: row.actorType, id: row.actorId, prefix: row.actorPrefix },
    action: row.action,
    accountId: row.accountId,
    applicationId: row.applicationId === null ? null : Number(row.applicationId),
    requestId: row.requestId,
    changes: (typeof row.changes === 'string' ? JSON.parse(row.changes) : row.changes) as AuditChanges,
  };
}
