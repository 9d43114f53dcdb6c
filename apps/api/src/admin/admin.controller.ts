import {
  AccountResponse,
  ApiKeyResponse,
  ApplicationResponse,
  CreateAccountRequest,
  CreateApiKeyRequest,
  CreateApplicationRequest,
  CreatedApiKeyResponse,
  CreateEventTypeRequest,
  EventTypeResponse,
  ok,
} from '@herald/contracts';
import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../common/auth/auth.decorators';
import { ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { AdminService } from './admin.service';

/** Operator routes: they need an admin key (HERALD_ADMIN_KEY or one made with the cli). */
@ApiTags('admin')
@ApiSecurity('api-key')
@ApiErrors(...AUTH_ERRORS, 'SCOPE_REQUIRED')
@AdminOnly()
@Controller('admin')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post('accounts')
  @ApiOperation({ summary: 'Create an account' })
  @ApiCreatedResponse({ type: AccountResponse })
  @ApiErrors(...BODY_ERRORS)
  async createAccount(@Body() body: CreateAccountRequest): Promise<AccountResponse> {
    return ok(await this.admin.createAccount(body));
  }

  @Post('applications')
  @ApiOperation({ summary: 'Create an application', description: "With the platform's own id, or the next free one." })
  @ApiCreatedResponse({ type: ApplicationResponse })
  @ApiErrors(...BODY_ERRORS, 'ACCOUNT_OR_KEY_NOT_FOUND', 'CONFLICT')
  async createApplication(@Body() body: CreateApplicationRequest): Promise<ApplicationResponse> {
    return ok(await this.admin.createApplication(body));
  }

  @Post('api_keys')
  @ApiOperation({ summary: 'Create an API key for an account', description: '`key` is shown only in this response.' })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  @ApiErrors(...BODY_ERRORS, 'ACCOUNT_OR_KEY_NOT_FOUND')
  async createApiKey(@Body() body: CreateApiKeyRequest): Promise<CreatedApiKeyResponse> {
    return ok(await this.admin.createApiKey(body));
  }

  @Delete('api_keys/:id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke an API key', description: 'Takes effect on the next request.' })
  @ApiOkResponse({ type: ApiKeyResponse })
  @ApiErrors('ACCOUNT_OR_KEY_NOT_FOUND')
  async revokeApiKey(@Param('id') id: string): Promise<ApiKeyResponse> {
    return ok(await this.admin.revokeApiKey(id));
  }

  @Post('event_types')
  @ApiOperation({ summary: 'Add an event type to the catalogue' })
  @ApiCreatedResponse({ type: EventTypeResponse })
  @ApiErrors(...BODY_ERRORS, 'CONFLICT')
  async createEventType(@Body() body: CreateEventTypeRequest): Promise<EventTypeResponse> {
    return ok(await this.admin.createEventType(body));
  }
}
