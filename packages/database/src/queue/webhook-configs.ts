import { preparedStatement, SqlQuery } from '../pg-pool';
import { WebhookRecord } from '../records';
import { toWebhookRecord, webhookColumns, WebhookRow } from '../configuration/webhook.sql';

/** A webhook's URL, retry policy, headers and signing secrets, as of one configuration version. */
export interface WebhookConfig {
  version: bigint;
  /** The same, as PostgreSQL sent it: a claim's version is compared as text first, without parsing. */
  versionText: string;
  webhook: WebhookRecord;
  /** Current first; retired ones until they expire (`expiresAtMs`, epoch ms). */
  secrets: { secret: string; expiresAtMs: number | null }[];
}

/** How many applications' configurations a worker keeps; the oldest kept goes first. */
const MAX_KEPT = 10_000;

/** Configurations of the applications $1, each with every secret it has (expired ones are left out as they are used). */
const LOAD_WEBHOOK_CONFIGS = preparedStatement(
  'load_webhook_configs',
  `SELECT w.application_id, w.config_version, ${webhookColumns('w')},
          COALESCE((SELECT json_agg(json_build_object('secret', ws.secret, 'expires_at', ws.expires_at)
                                    ORDER BY ws.expires_at DESC NULLS FIRST, ws.created_at DESC)
                      FROM webhook_secrets ws WHERE ws.application_id = w.application_id), '[]') AS secrets
     FROM webhooks w WHERE w.application_id = ANY($1::int[])`,
);

type ConfigRow = WebhookRow & {
  application_id: number;
  config_version: string;
  secrets: { secret: string; expires_at: string | null }[] | string;
};

/**
 * The webhook configurations a worker's attempts use, kept per application by configuration
 * version (issue 21, item 3). The claim returns each delivery's webhook `config_version`, not its
 * columns and secrets: those were decoded per claimed row, and the secrets read by a sub-query per
 * row. A version this worker does not hold yet is read once, for every application that needs
 * it, in one statement on the claim's own connection; every change to a webhook's URL, retry
 * policy, headers or secrets takes a new version (webhook.repository.ts), so a kept one is never
 * stale. A version newer than the claim's (changed in between) serves as well: it is what the
 * claim would have read a moment later. Secrets are kept with their expiry and filtered at use,
 * as the claim did with its `now`.
 */
export class WebhookConfigs {
  private readonly kept = new Map<number, WebhookConfig>();

  /** Reads the configurations of `wanted` (application id, the version its claim saw) not held at that version or later. */
  async load(sql: SqlQuery, wanted: Iterable<{ applicationId: number; version: string }>): Promise<void> {
    const missing = new Set<number>();
    for (const { applicationId, version } of wanted) {
      const held = this.kept.get(applicationId);
      if (!held || !covers(held, version)) missing.add(applicationId);
    }
    if (missing.size === 0) return;
    const rows = await sql<ConfigRow>(LOAD_WEBHOOK_CONFIGS, [[...missing]]);
    for (const row of rows) {
      missing.delete(Number(row.application_id));
      this.keep(Number(row.application_id), toConfig(row));
    }
    // Removed since their claim: nothing to send with (the attempt cancels them). If the claim's
    // statement committed its leases and this read fails, the claim fails and its deliveries wait
    // for their lease to run out, as when a worker dies between the claim and the attempt.
    for (const applicationId of missing) this.kept.delete(applicationId);
  }

  /** The configuration load() read or held for the application at `version` or later; undefined when its webhook is gone. */
  get(applicationId: number, version: string): WebhookConfig | undefined {
    const held = this.kept.get(applicationId);
    return held && covers(held, version) ? held : undefined;
  }

  /** The secrets valid at `nowMs`, current first. */
  static secretsAt(config: WebhookConfig, nowMs: number): string[] {
    return config.secrets.filter((s) => s.expiresAtMs === null || s.expiresAtMs > nowMs).map((s) => s.secret);
  }

  private keep(applicationId: number, config: WebhookConfig): void {
    // Two loads may overlap (a claim of the loop's and one riding on a finish): the older read never replaces the newer.
    const held = this.kept.get(applicationId);
    if (held && held.version > config.version) return;
    this.kept.delete(applicationId);
    if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value as number);
    this.kept.set(applicationId, config);
  }
}

/** Whether `held` is the configuration at `version` or a later one: the same text in the steady state, parsed only on a change. */
function covers(held: WebhookConfig, version: string): boolean {
  return held.versionText === version || held.version >= BigInt(version);
}

function toConfig(row: ConfigRow): WebhookConfig {
  const secrets = typeof row.secrets === 'string' ? (JSON.parse(row.secrets) as Exclude<ConfigRow['secrets'], string>) : row.secrets;
  return {
    version: BigInt(row.config_version),
    versionText: String(row.config_version),
    webhook: toWebhookRecord(row),
    secrets: secrets.map((s) => ({ secret: s.secret, expiresAtMs: s.expires_at === null ? null : Date.parse(s.expires_at) })),
  };
}
