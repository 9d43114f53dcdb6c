import { ApplicationRecord, ApplicationRepository } from '@herald/database';
import { Injectable } from '@nestjs/common';

const MAX_ENTRIES = 50_000;

/**
 * Which account owns an application, remembered: an application never changes account and
 * cannot be deleted, so a found one stays true (misses are not remembered — it may be created
 * any moment). Whoever adds deleting or moving applications must evict here.
 */
@Injectable()
export class ApplicationDirectory {
  private readonly known = new Map<number, ApplicationRecord>();

  constructor(private readonly applications: ApplicationRepository) {}

  async find(id: number): Promise<ApplicationRecord | null> {
    const cached = this.known.get(id);
    if (cached) return cached;
    const application = await this.applications.findById(id);
    if (application) {
      if (this.known.size >= MAX_ENTRIES) this.known.delete(this.known.keys().next().value as number);
      this.known.set(id, application);
    }
    return application;
  }
}
