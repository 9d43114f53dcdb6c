import {
  AccountListQuery,
  AccountListResponse,
  AccountResponse,
  ApiKeyListQuery,
  ApiKeyListResponse,
  ApplicationListQuery,
  ApplicationListResponse,
  ApiKeyResponse,
  ApplicationResponse,
  CreateAccountRequest,
  CreateApiKeyRequest,
  CreateApplicationRequest,
  CreatedApiKeyResponse,
  CreateEventTypeRequest,
  EventTypeResponse,
  ok,
  page,
  UpdateEventTypeRequest,
} from '@herald/contracts';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../common/auth/auth.decorators';
import { ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { EventTypeService } from '../event-types/event-type.service';
import { Caller, CallerOf } from '../common/audit/caller';
import { AdminService } from './admin.service';

/** Operator routes: they need an admin key (HERALD_ADMIN_KEY or one made with the cli). */
@ApiTags('admin')
@ApiSecurity('api-key')
@ApiErrors(...AUTH_ERRORS, 'SCOPE_REQUIRED')
@AdminOnly()
@Controller('admin')
export class AdminController {
  constructor(
    private readonly admin: AdminService,
    private readonly eventTypes: EventTypeService,
  ) {}

  @Get('accounts')
  @ApiOperation({ summary: 'List accounts', description: 'Newest first, paged with a cursor.' })
  @ApiOkResponse({ type: AccountListResponse })
  @ApiErrors('INVALID_PARAMETER')
  async listAccounts(@Query() query: AccountListQuery): Promise<AccountListResponse> {
    const found = await this.admin.listAccounts(query);
    return page(found.items, found.nextCursor);
  }

  @Get('applications')
  @ApiOperation({ summary: 'List applications', description: "By id, optionally one account's, paged with a cursor." })
  @ApiOkResponse({ type: ApplicationListResponse })
  @ApiErrors('INVALID_PARAMETER')
  async listApplications(@Query() query: ApplicationListQuery): Promise<ApplicationListResponse> {
    const found = await this.admin.listApplications(query);
    return page(found.items, found.nextCursor);
  }

  @Get('api_keys')
  @ApiOperation({
    summary: 'List API keys',
    description: "Newest first, optionally one account's: prefix, name, scope and dates, never the key or its hash.",
  })
  @ApiOkResponse({ type: ApiKeyListResponse })
  @ApiErrors('INVALID_PARAMETER')
  async listApiKeys(@Query() query: ApiKeyListQuery): Promise<ApiKeyListResponse> {
    const found = await this.admin.listApiKeys(query);
    return page(found.items, found.nextCursor);
  }

  @Get('accounts/:id')
  @ApiOperation({ summary: 'Read an account' })
  @ApiParam({ name: 'id', example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  @ApiOkResponse({ type: AccountResponse })
  @ApiErrors('ACCOUNT_OR_KEY_NOT_FOUND')
  async getAccount(@Param('id') id: string): Promise<AccountResponse> {
    return ok(await this.admin.getAccount(id));
  }

  @Get('applications/:id')
  @ApiOperation({
    summary: 'Read an application',
    description: 'Any id that is not an existing application, malformed ones too, is 404-01.',
  })
  @ApiParam({ name: 'id', type: 'integer', example: 42 })
  @ApiOkResponse({ type: ApplicationResponse })
  @ApiErrors('APPLICATION_NOT_FOUND')
  async getApplication(@Param('id') id: string): Promise<ApplicationResponse> {
    return ok(await this.admin.getApplication(id));
  }

  @Get('api_keys/:id')
  @ApiOperation({ summary: 'Read an API key', description: 'Prefix, name, scope and dates, never the key or its hash. Revoked keys too.' })
  @ApiParam({ name: 'id', example: 'key_01jd8x7a1b2c3d4e5f6g7h8j9k' })
  @ApiOkResponse({ type: ApiKeyResponse })
  @ApiErrors('ACCOUNT_OR_KEY_NOT_FOUND')
  async getApiKey(@Param('id') id: string): Promise<ApiKeyResponse> {
    return ok(await this.admin.getApiKey(id));
  }

  @Post('accounts')
  @ApiOperation({ summary: 'Create an account' })
  @ApiCreatedResponse({ type: AccountResponse })
  @ApiErrors(...BODY_ERRORS)
  async createAccount(@Body() body: CreateAccountRequest, @CallerOf() caller: Caller): Promise<AccountResponse> {
    return ok(await this.admin.createAccount(body, caller));
  }

  @Post('applications')
  @ApiOperation({ summary: 'Create an application', description: "With the platform's own id, or the next free one." })
  @ApiCreatedResponse({ type: ApplicationResponse })
  @ApiErrors(...BODY_ERRORS, 'ACCOUNT_OR_KEY_NOT_FOUND', 'CONFLICT')
  async createApplication(@Body() body: CreateApplicationRequest, @CallerOf() caller: Caller): Promise<ApplicationResponse> {
    return ok(await this.admin.createApplication(body, caller));
  }

  @Post('api_keys')
  @ApiOperation({ summary: 'Create an API key for an account', description: '`key` is shown only in this response.' })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  @ApiErrors(...BODY_ERRORS, 'ACCOUNT_OR_KEY_NOT_FOUND')
  async createApiKey(@Body() body: CreateApiKeyRequest, @CallerOf() caller: Caller): Promise<CreatedApiKeyResponse> {
    return ok(await this.admin.createApiKey(body, caller));
  }

  @Delete('api_keys/:id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke an API key', description: 'Takes effect on the next request.' })
  @ApiOkResponse({ type: ApiKeyResponse })
  @ApiErrors('ACCOUNT_OR_KEY_NOT_FOUND')
  async revokeApiKey(@Param('id') id: string, @CallerOf() caller: Caller): Promise<ApiKeyResponse> {
    return ok(await this.admin.revokeApiKey(id, caller));
  }

  @Post('event_types')
  @ApiOperation({
    summary: 'Add an event type to the catalogue',
    description:
      'Optionally with a JSON Schema (draft 2020-12) of its payload, enforced at publish when `enforce` is true, and an example ' +
      'payload that must satisfy it. A schema that does not compile, or an example that does not match, is 400-02 naming the place.',
  })
  @ApiCreatedResponse({ type: EventTypeResponse })
  @ApiErrors(...BODY_ERRORS, 'CONFLICT')
  async createEventType(@Body() body: CreateEventTypeRequest, @CallerOf() caller: Caller): Promise<EventTypeResponse> {
    return ok(await this.eventTypes.create(body, caller));
  }

  @Put('event_types/:name')
  @ApiOperation({
    summary: 'Change an event type',
    description:
      'Its description, schema, enforcement or example; a field left out keeps its value, null removes a schema or an example. ' +
      'The new state is checked as a whole (a new schema against the stored example too). Every api process enforces it within a second.',
  })
  @ApiParam({ name: 'name', example: 'acw_start' })
  @ApiOkResponse({ type: EventTypeResponse })
  @ApiErrors(...BODY_ERRORS, 'EVENT_TYPE_NOT_FOUND', 'CONFLICT')
  async updateEventType(
    @Param('name') name: string,
    @Body() body: UpdateEventTypeRequest,
    @CallerOf() caller: Caller,
  ): Promise<EventTypeResponse> {
    return ok(await this.eventTypes.update(name, body, caller));
  }
}
