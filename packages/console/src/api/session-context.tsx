import type { ApiKeyView } from '@runplane/contracts';
import { createContext, useContext } from 'react';
import type { ConsoleApi } from './client';

/** The signed-in key: its API, what it is, and whether it may change anything. */
export interface Session {
  api: ConsoleApi;
  key: ApiKeyView;
  canWrite: boolean;
  signOut(): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

export const canWrite = (key: ApiKeyView) => key.scope === 'admin' || key.scope === 'readwrite';
