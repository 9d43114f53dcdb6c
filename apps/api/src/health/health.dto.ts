import { ApiProperty } from '@nestjs/swagger';

/** The body of GET /healthz. The probes' bodies are not the envelope: orchestrators read the status code. */
export class LivenessResponse {
  @ApiProperty({ type: 'string', enum: ['ok'], example: 'ok' })
  status!: 'ok';
}

/** The body of GET /readyz when the database answers and every migration is applied. */
export class ReadinessResponse {
  @ApiProperty({ type: 'string', enum: ['ready'], example: 'ready' })
  status!: 'ready';
}
