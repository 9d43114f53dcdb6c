import { AppError, ERROR_DIRECTORY, ErrorCodeListResponse, ErrorCodeResponse, findErrorCode, quoteInput } from '@herald/contracts';
import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, AUTH_ERRORS } from '../common/swagger/api-errors.decorator';

/** The read-only directory of every code the API answers with, served from the catalogue in code. */
@ApiTags('error codes')
@ApiSecurity('api-key')
@ApiErrors(...AUTH_ERRORS)
@Controller('error_codes')
export class ErrorCodeController {
  @Get()
  @ApiOperation({ summary: 'Read all error codes' })
  @ApiOkResponse({ type: ErrorCodeListResponse })
  list(): ErrorCodeListResponse {
    return { data: [...ERROR_DIRECTORY] };
  }

  @Get(':code')
  @ApiOperation({ summary: 'Read one error code' })
  @ApiParam({ name: 'code', example: '400-01', description: 'An error code, shape NNN-NN.' })
  @ApiOkResponse({ type: ErrorCodeResponse })
  @ApiErrors('ERROR_CODE_NOT_FOUND')
  one(@Param('code') code: string): ErrorCodeResponse {
    const entry = findErrorCode(code);
    if (!entry) throw new AppError('ERROR_CODE_NOT_FOUND', `${quoteInput(code)} is not in the error directory.`);
    return { data: entry };
  }
}
