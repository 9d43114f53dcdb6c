import { ErrorKind } from '@herald/contracts';
import { applyDecorators, Controller, UseGuards } from '@nestjs/common';
import { ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, APPLICATION_ERRORS } from '../swagger/api-errors.decorator';
import { ApplicationAccessGuard } from './application-access.guard';

/**
 * A controller under `/application/{application_id}/…`: the access guard resolves the
 * application (400-03 / 404-01 / 403-03) and hands handlers its scope via @OwnedApplication();
 * the OpenAPI document gets the tag, the key, the path parameter and those errors. `errors`
 * adds catalogue entries every route of the controller can answer.
 */
export function ApplicationController(path: string, options: { tag: string; errors?: ErrorKind[] }): ClassDecorator {
  return applyDecorators(
    ApiTags(options.tag),
    ApiSecurity('api-key'),
    ApiParam({ name: 'application_id', type: 'integer', description: 'The system identifier of the application.' }),
    ApiErrors(...APPLICATION_ERRORS, ...(options.errors ?? [])),
    UseGuards(ApplicationAccessGuard),
    Controller(path ? `application/:application_id/${path}` : 'application/:application_id'),
  );
}
