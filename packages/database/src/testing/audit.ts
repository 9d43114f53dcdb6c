import { UlidIdGenerator } from '@herald/core';
import { AuditEntry } from '../audit/audit.sql';

const ids = new UlidIdGenerator();

/**
 * An audit record for a change a test makes through a repository directly, where no request (and
 * no service deciding what to record) is involved. Usable as an entry or as an AuditOf callback.
 */
export function testAudit(): AuditEntry {
  return {
    id: ids.next('aud'),
    at: new Date(),
    actor: { type: 'system', id: 'test', prefix: null },
    action: 'webhook.updated',
    accountId: null,
    applicationId: null,
    requestId: null,
    changes: {},
  };
}
