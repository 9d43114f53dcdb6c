import { AppError } from '@herald/contracts';
import { HealthRepository } from '@herald/database';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../common/errors/to-app-error';
import { ApiErrors, HTTP_ERRORS } from '../common/swagger/api-errors.decorator';
import { ApiPublic } from '../common/swagger/api-public.decorator';
import { LivenessResponse, ReadinessResponse } from './health.dto';

/** Liveness and readiness for orchestrators; they answer without a key. */
@ApiTags('operations')
@ApiPublic()
@ApiErrors(...HTTP_ERRORS)
@Public()
@Controller()
export class HealthController {
  constructor(private readonly health: HealthRepository) {}

  @Get('healthz')
  @ApiOperation({
    summary: 'Liveness',
    description: 'Answers 200 while the process serves HTTP; it reads nothing else, so a database outage does not restart the api.',
  })
  @ApiOkResponse({ type: LivenessResponse, description: 'The process is alive.' })
  alive(): LivenessResponse {
    return { status: 'ok' };
  }

  /** Ready when the database answers and every migration in the image has been applied. */
  @Get('readyz')
  @ApiOperation({
    summary: 'Readiness',
    description: 'Answers 200 when the database answers and every migration this version ships has been applied; 503 otherwise.',
  })
  @ApiOkResponse({ type: ReadinessResponse, description: 'Ready to serve requests.' })
  @ApiErrors('SERVICE_UNAVAILABLE')
  async ready(): Promise<ReadinessResponse> {
    const pending = await this.health.pendingMigrations();
    if (pending.length > 0) {
      throw new AppError('SERVICE_UNAVAILABLE', `Migrations not applied yet: ${pending.join(', ')}.`, {
        headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
    }
    return { status: 'ready' };
  }
}
