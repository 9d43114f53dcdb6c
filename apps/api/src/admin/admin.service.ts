import { auditChanges, Clock, CLOCK, ID_GENERATOR, IdGenerator, isIdOf, issueApiKey } from '@herald/core';
import {
  AccountDto,
  AccountListQuery,
  ApiKeyListQuery,
  ApplicationListQuery,
  DEFAULT_PAGE_SIZE,
  ApiKeyDto,
  AppError,
  APPLICATION_ID_MAX,
  ApplicationDto,
  CreateAccountRequest,
  CreateApiKeyRequest,
  CreateApplicationRequest,
  CreatedApiKeyDto,
  quoteInput,
} from '@herald/contracts';
import {
  AccountRepository,
  ApiKeyRecord,
  ApiKeyRepository,
  ApplicationRecord,
  ApplicationRepository,
  BOOTSTRAP_ADMIN_KEY_ID,
  Page,
} from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';
import { ApiKeyCache } from '../common/auth/api-key-cache';

/** An application id as a path writes it: no sign, no leading zero, at most ten digits. */
const APPLICATION_ID = /^[1-9][0-9]{0,9}$/;

@Injectable()
export class AdminService {
  constructor(
    private readonly accounts: AccountRepository,
    private readonly applications: ApplicationRepository,
    private readonly apiKeys: ApiKeyRepository,
    private readonly keyCache: ApiKeyCache,
    private readonly audit: AuditTrail,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async createAccount(request: CreateAccountRequest, caller: Caller): Promise<AccountDto> {
    const account = { id: this.ids.next('acc'), name: request.name };
    const record = this.audit.entry(caller, 'account.created', { accountId: account.id, applicationId: null }, auditChanges(null, account));
    return this.accounts.create(account, record);
  }

  async createApplication(request: CreateApplicationRequest, caller: Caller): Promise<ApplicationDto> {
    await this.requireAccount(request.account_id);
    const application = await this.applications.create(
      { id: request.id ?? null, accountId: request.account_id, name: request.name },
      (created) =>
        this.audit.entry(
          caller,
          'application.created',
          { accountId: created.accountId, applicationId: created.id },
          auditChanges(null, { ...toApplicationDto(created) }),
        ),
    );
    if (application === 'id_taken') {
      throw new AppError('CONFLICT', `Application ${request.id} already exists.`, {
        details: [{ field: 'id', message: `application ${request.id} already exists` }],
      });
    }
    if (application === 'ids_exhausted') throw new AppError('CONFLICT', 'Every application id is in use.');
    return toApplicationDto(application);
  }

  /** The key is returned here and never again: only its hash is stored. Recorded by id, name and prefix, never the key. */
  async createApiKey(request: CreateApiKeyRequest, caller: Caller): Promise<CreatedApiKeyDto> {
    await this.requireAccount(request.account_id);
    const issued = issueApiKey();
    const key = {
      id: this.ids.next('key'),
      accountId: request.account_id,
      scope: 'account' as const,
      name: request.name,
      prefix: issued.prefix,
    };
    const audited = this.audit.entry(
      caller,
      'api_key.created',
      { accountId: key.accountId, applicationId: null },
      auditChanges(null, { id: key.id, name: key.name, prefix: key.prefix, scope: key.scope, account_id: key.accountId }),
    );
    const record = await this.apiKeys.create({ ...key, keyHash: issued.hash }, audited);
    return { ...toApiKeyDto(record), key: issued.key };
  }

  async revokeApiKey(id: string, caller: Caller): Promise<ApiKeyDto> {
    const record = isIdOf('key', id)
      ? await this.apiKeys.revoke(id, this.clock.now(), ({ before, after }) =>
          this.audit.entry(
            caller,
            'api_key.revoked',
            { accountId: before.accountId, applicationId: null },
            // Named by the key's id: the record's account does not say which of its keys it was.
            auditChanges(
              { [`${id}.revoked_at`]: before.revokedAt?.toISOString() ?? null },
              { [`${id}.revoked_at`]: after.revokedAt?.toISOString() ?? null },
            ),
          ),
        )
      : null;
    // Other api processes hear of it through NOTIFY; this one (and the embedded database's) directly.
    this.keyCache.forget(id);
    if (!record) throw new AppError('ACCOUNT_OR_KEY_NOT_FOUND', `API key ${quoteInput(id)} does not exist.`);
    return toApiKeyDto(record);
  }

  async getAccount(id: string): Promise<AccountDto> {
    const account = isIdOf('acc', id) ? await this.accounts.findById(id) : null;
    if (!account) throw new AppError('ACCOUNT_OR_KEY_NOT_FOUND', `Account ${quoteInput(id)} does not exist.`);
    return account;
  }

  /** Any id that is not an application's (`0`, `abc`, `042`, past the maximum) is looked up nowhere. */
  async getApplication(id: string): Promise<ApplicationDto> {
    const application = APPLICATION_ID.test(id) && Number(id) <= APPLICATION_ID_MAX ? await this.applications.findById(Number(id)) : null;
    if (!application) throw new AppError('APPLICATION_NOT_FOUND', `Application ${quoteInput(id)} does not exist.`);
    return toApplicationDto(application);
  }

  /** The bootstrap admin key (HERALD_ADMIN_KEY) is listed, so it can be read too; its id is not a ULID. */
  async getApiKey(id: string): Promise<ApiKeyDto> {
    const record = isIdOf('key', id) || id === BOOTSTRAP_ADMIN_KEY_ID ? await this.apiKeys.findById(id) : null;
    if (!record) throw new AppError('ACCOUNT_OR_KEY_NOT_FOUND', `API key ${quoteInput(id)} does not exist.`);
    return toApiKeyDto(record);
  }

  async listAccounts(query: AccountListQuery): Promise<Page<AccountDto>> {
    return this.accounts.list(query.limit ?? DEFAULT_PAGE_SIZE, query.cursor ?? null);
  }

  async listApplications(query: ApplicationListQuery): Promise<Page<ApplicationDto>> {
    const found = await this.applications.list(
      { accountId: query.account_id },
      query.limit ?? DEFAULT_PAGE_SIZE,
      query.cursor ? Number(query.cursor) : null,
    );
    return { items: found.items.map(toApplicationDto), nextCursor: found.nextCursor };
  }

  async listApiKeys(query: ApiKeyListQuery): Promise<Page<ApiKeyDto>> {
    const found = await this.apiKeys.list({ accountId: query.account_id }, query.limit ?? DEFAULT_PAGE_SIZE, query.cursor ?? null);
    return { items: found.items.map(toApiKeyDto), nextCursor: found.nextCursor };
  }

  private async requireAccount(accountId: string): Promise<void> {
    if (!(await this.accounts.exists(accountId))) {
      throw new AppError('ACCOUNT_OR_KEY_NOT_FOUND', `Account ${accountId} does not exist.`, {
        details: [{ field: 'account_id', message: `no account ${accountId}` }],
      });
    }
  }
}

export function toApplicationDto(application: ApplicationRecord): ApplicationDto {
  return { id: application.id, name: application.name, account_id: application.accountId };
}

function toApiKeyDto(record: ApiKeyRecord): ApiKeyDto {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    account_id: record.accountId,
    scope: record.scope,
    created_at: record.createdAt.toISOString(),
    revoked_at: record.revokedAt?.toISOString() ?? null,
  };
}
