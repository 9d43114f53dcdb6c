import { AuditAction, AuditChanges, Clock, CLOCK, ID_GENERATOR, IdGenerator } from '@herald/core';
import { AuditEntry } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { Caller } from './caller';

/** What a record is about: an application (its ApplicationScope), an account, or neither (the operator's own settings). */
export interface AuditTarget {
  accountId: string | null;
  applicationId: number | null;
}

/**
 * Makes audit records (PRODUCT.md §16) for the services: who (the caller), what (the action and
 * its changes, which the service works out and redacts with auditChanges), about what, and
 * when, with an id of its own. The repository that makes the change stores the record in the
 * same transaction.
 */
@Injectable()
export class AuditTrail {
  constructor(
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  entry(caller: Caller, action: AuditAction, target: AuditTarget, changes: AuditChanges = {}): AuditEntry {
    return {
      id: this.ids.next('aud'),
      at: this.clock.now(),
      actor: caller.actor,
      action,
      accountId: target.accountId,
      applicationId: target.applicationId,
      requestId: caller.requestId,
      changes,
    };
  }
}
