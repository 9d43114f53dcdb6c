import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { AccountRecord } from './records';

@Injectable()
export class AccountRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(account: AccountRecord): Promise<AccountRecord> {
    const row = await this.prisma.account.create({ data: account, select: { id: true, name: true } });
    return row;
  }

  async exists(id: string): Promise<boolean> {
    return (await this.prisma.account.count({ where: { id } })) > 0;
  }
}
