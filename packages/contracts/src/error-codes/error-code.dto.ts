import { ApiProperty } from '@nestjs/swagger';

export class ErrorCodeDto {
  @ApiProperty({ example: '400-01', pattern: '^\\d{3}-\\d{2}$', description: 'The first three digits are the HTTP status.' })
  code!: string;

  @ApiProperty({ example: 'The request has no body, or the body is not a JSON object sent as application/json.' })
  message!: string;
}

export class ErrorCodeResponse {
  @ApiProperty({ type: ErrorCodeDto })
  data!: ErrorCodeDto;
}

export class ErrorCodeListResponse {
  @ApiProperty({ type: [ErrorCodeDto] })
  data!: ErrorCodeDto[];
}
