import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { HeraldApiError } from '@herald/client';
import { api, call } from './api/client';
import { clearSession, readSession, saveSession, type Session } from './api/session';

export type Role = 'admin' | 'account' | 'portal';

interface SessionState {
  session: Session | null;
  signIn(session: Session): void;
  signOut(): void;
}

const Context = createContext<SessionState | null>(null);

export function SessionProvider({ initial, children }: { initial: Session | null; children: ReactNode }) {
  const [session, setSession] = useState(initial);
  const queryClient = useQueryClient();
  const signIn = useCallback((next: Session) => {
    saveSession(next);
    setSession(next);
  }, []);
  const signOut = useCallback(() => {
    clearSession();
    queryClient.clear();
    setSession(null);
  }, [queryClient]);
  const value = useMemo(() => ({ session, signIn, signOut }), [session, signIn, signOut]);
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(Context);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/**
 * What the key may do. There is no "who am I" route: an admin key can list accounts, an account
 * key is refused with 403-04 (scope), anything else is not a valid key.
 */
export async function probeRole(): Promise<Role> {
  const session = readSession();
  if (session?.kind === 'portal') return 'portal';
  try {
    await call(api.GET('/admin/accounts', { params: { query: { limit: 1 } } }));
    return 'admin';
  } catch (error) {
    if (error instanceof HeraldApiError && error.code === '403-04') return 'account';
    throw error;
  }
}

/** The cache key of a credential's role; SignIn fills it with the answer of its own probe, so the key is probed once. */
export const roleQueryKey = (credential: string | undefined) => ['role', credential] as const;

export function useRole() {
  const { session } = useSession();
  return useQuery({ queryKey: roleQueryKey(session?.credential), queryFn: probeRole, enabled: session !== null, staleTime: Infinity });
}
