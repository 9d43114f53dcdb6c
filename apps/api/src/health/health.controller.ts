import { AppError } from '@herald/contracts';
import { HealthRepository } from '@herald/database';
import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../common/errors/to-app-error';

/** Liveness and readiness for orchestrators; they answer without a key. */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(private readonly health: HealthRepository) {}

  @Get('healthz')
  alive(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready when the database answers and every migration in the image has been applied. */
  @Get('readyz')
  async ready(): Promise<{ status: 'ready' }> {
    const pending = await this.health.pendingMigrations();
    if (pending.length > 0) {
      throw new AppError('SERVICE_UNAVAILABLE', `Migrations not applied yet: ${pending.join(', ')}.`, {
        headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
    }
    return { status: 'ready' };
  }
}
