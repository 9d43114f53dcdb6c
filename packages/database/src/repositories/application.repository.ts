import { AppError } from '@herald/contracts';
import { Injectable } from '@nestjs/common';
import { classifyDatabaseError } from '../database-errors';
import { PrismaService } from '../prisma.service';
import { ApplicationRecord, ApplicationScope } from './records';

const MAX_APPLICATION_ID = 2_147_483_647;
/** Concurrent creations without an id can pick the same next id; the loser simply tries again. */
const ID_ATTEMPTS = 5;

@Injectable()
export class ApplicationRepository {
  constructor(private readonly prisma: PrismaService) {}

  async findById(id: number): Promise<ApplicationRecord | null> {
    return this.prisma.application.findUnique({
      where: { id },
      select: { id: true, accountId: true, name: true },
    });
  }

  /** The only place an ApplicationScope is made: call it after checking the caller owns `application`. */
  scopeOf(application: ApplicationRecord): ApplicationScope {
    return { applicationId: application.id, accountId: application.accountId } as ApplicationScope;
  }

  /** Creates an application with the platform's id, or with the next free one when none is given. */
  async create(application: { id: number | null; accountId: string; name: string }): Promise<ApplicationRecord> {
    for (let attempt = 1; ; attempt++) {
      const id = application.id ?? (await this.nextFreeId());
      try {
        return await this.prisma.application.create({
          data: { id, accountId: application.accountId, name: application.name },
          select: { id: true, accountId: true, name: true },
        });
      } catch (error) {
        if (classifyDatabaseError(error) !== 'unique_violation') throw error;
        if (application.id !== null) {
          throw new AppError('CONFLICT', `Application ${application.id} already exists.`, {
            details: [{ field: 'id', message: `application ${application.id} already exists` }],
          });
        }
        if (attempt >= ID_ATTEMPTS) throw error;
      }
    }
  }

  private async nextFreeId(): Promise<number> {
    const { _max } = await this.prisma.application.aggregate({ _max: { id: true } });
    const next = (_max.id ?? 0) + 1;
    if (next > MAX_APPLICATION_ID) {
      throw new AppError('CONFLICT', 'No application id is left above the highest one in use; give an id explicitly.');
    }
    return next;
  }
}
