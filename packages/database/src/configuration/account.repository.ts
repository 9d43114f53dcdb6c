import { Injectable } from '@nestjs/common';
import { AuditEntry } from '../audit/audit.sql';
import { auditCreateData } from './audit-record';
import { PrismaService } from '../prisma.service';
import { AccountRecord, Page, pageOf } from '../records';

@Injectable()
export class AccountRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The account and its audit record, in one transaction. */
  async create(account: AccountRecord, audit: AuditEntry): Promise<AccountRecord> {
    const [row] = await this.prisma.$transaction([
      this.prisma.account.create({ data: account, select: { id: true, name: true } }),
      this.prisma.auditRecord.create({ data: auditCreateData(audit), select: { id: true } }),
    ]);
    return row;
  }

  /** Newest first (ids are time-ordered); the cursor is the last id of the previous page. */
  async list(limit: number, before: string | null): Promise<Page<AccountRecord>> {
    const rows = await this.prisma.account.findMany({
      where: before === null ? {} : { id: { lt: before } },
      orderBy: { id: 'desc' },
      take: limit + 1,
      select: { id: true, name: true },
    });
    return pageOf(rows, limit, (row) => row.id);
  }

  async findById(id: string): Promise<AccountRecord | null> {
    return this.prisma.account.findUnique({ where: { id }, select: { id: true, name: true } });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.prisma.account.count({ where: { id } })) > 0;
  }
}
