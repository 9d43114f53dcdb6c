import { Module } from '@nestjs/common';
import { AdminAuditController, AuditController } from './audit.controller';
import { AuditService } from './audit.service';

/** The audit log's routes (PRODUCT.md §16). Writing records is AuditTrail's (common/audit/), in every service that changes something. */
@Module({ controllers: [AuditController, AdminAuditController], providers: [AuditService] })
export class AuditModule {}
