import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiSuccessFlag } from '../common/envelope';
import { ERROR_DIRECTORY } from './error-catalogue';

export class ErrorDetailDto {
  @ApiProperty({ example: 'retry_config.max_retries' })
  field!: string;

  @ApiProperty({ example: 'max_retries must not be greater than 25' })
  message!: string;
}

export class ErrorBodyDto {
  @ApiProperty({ enum: ERROR_DIRECTORY.map((entry) => entry.code), example: '400-02' })
  code!: string;

  @ApiProperty({ example: 'Validation failed; details name each field in error.' })
  message!: string;

  @ApiPropertyOptional({ type: [ErrorDetailDto] })
  details?: ErrorDetailDto[];
}

/** The body of every non-2xx response, on every route. */
export class ErrorResponse {
  @ApiSuccessFlag(false)
  success!: false;

  @ApiProperty({ type: ErrorBodyDto })
  error!: ErrorBodyDto;

  @ApiProperty({ example: 'req_3b241101e2bb4255' })
  request_id!: string;
}
