import { HeraldConfig } from '@herald/core';

export interface AdminOptions {
  url?: string;
  key?: string;
  name?: string;
  account?: string;
  id?: string;
  description?: string;
  limit?: string;
  cursor?: string;
}

interface AdminRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
}

/**
 * Operator commands. They call the admin API of a running Herald (like every other client),
 * so the cli has no second copy of the rules: `herald accounts create --name Acme`.
 */
export async function admin(config: HeraldConfig, words: string[], options: AdminOptions): Promise<number> {
  const request = adminRequest(words, options);
  if (typeof request === 'string') {
    console.error(`herald: ${request}`);
    return 2;
  }
  const key = options.key ?? config.auth.adminKey;
  if (!key) {
    console.error('herald: give an admin key with --key or HERALD_ADMIN_KEY');
    return 2;
  }
  const base = options.url ?? `http://127.0.0.1:${config.http.port}`;
  let response: Response;
  try {
    response = await fetch(new URL(request.path, base), {
      method: request.method,
      headers: { authorization: key, 'content-type': 'application/json' },
      body: request.body ? JSON.stringify(request.body) : undefined,
    });
  } catch (error) {
    console.error(`herald: cannot reach Herald at ${base} (${(error as Error).message}); is it running? (--url)`);
    return 1;
  }
  const text = await response.text();
  let printed = text;
  try {
    printed = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: print as received.
  }
  (response.ok ? console.log : console.error)(printed);
  return response.ok ? 0 : 1;
}

function adminRequest(words: string[], o: AdminOptions): AdminRequest | string {
  const [resource, action, target] = words;
  const need = (...names: (keyof AdminOptions)[]) => {
    const missing = names.filter((name) => !o[name]);
    return missing.length > 0 ? `${resource} ${action} needs ${missing.map((m) => `--${m}`).join(', ')}` : null;
  };
  const listing = (path: string, filters: Record<string, string | undefined>): AdminRequest => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...filters, limit: o.limit, cursor: o.cursor }))
      if (value !== undefined) query.set(name, value);
    return { method: 'GET', path: query.size > 0 ? `${path}?${query}` : path };
  };
  switch (`${resource} ${action}`) {
    case 'accounts list':
      return listing('/admin/accounts', {});
    case 'applications list':
      return listing('/admin/applications', { account_id: o.account });
    case 'api-keys list':
      return listing('/admin/api_keys', { account_id: o.account });
    case 'accounts create':
      return need('name') ?? { method: 'POST', path: '/admin/accounts', body: { name: o.name } };
    case 'applications create': {
      const id = o.id === undefined ? undefined : Number(o.id);
      if (o.id !== undefined && !Number.isInteger(id)) return `--id must be an integer, got "${o.id}"`;
      return need('name', 'account') ?? { method: 'POST', path: '/admin/applications', body: { id, name: o.name, account_id: o.account } };
    }
    case 'api-keys create':
      return need('name', 'account') ?? { method: 'POST', path: '/admin/api_keys', body: { account_id: o.account, name: o.name } };
    case 'api-keys revoke':
      return target ? { method: 'DELETE', path: `/admin/api_keys/${encodeURIComponent(target)}` } : 'api-keys revoke needs the key id';
    case 'event-types create':
      return need('name') ?? { method: 'POST', path: '/admin/event_types', body: { name: o.name, description: o.description } };
    default:
      return `unknown command "${words.join(' ')}"; see herald --help`;
  }
}
