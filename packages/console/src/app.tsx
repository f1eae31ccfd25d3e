import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { ConsoleApi } from './api/client';
import { canWrite, SessionContext, type Session } from './api/session-context';
import { forgetKey, storedKey, storeKey } from './api/session';
import { Layout } from './components/layout';
import { ApiKeysPage } from './pages/api-keys-page';
import { EndpointFormPage } from './pages/endpoint-form-page';
import { EndpointPage } from './pages/endpoint-page';
import { EndpointsPage } from './pages/endpoints-page';
import { JobPage } from './pages/job-page';
import { LoginPage } from './pages/login-page';
import { PodsPage } from './pages/pods-page';
import { RequestsPage } from './pages/requests-page';
import { SecretsPage } from './pages/secrets-page';
import { TemplatesPage } from './pages/templates-page';
import { WebhooksPage } from './pages/webhooks-page';
import { matchPath, navigate, useLocation } from './router';

/** Path patterns and their pages (first match wins). */
const PAGES: [string, (p: Record<string, string>) => ReactNode][] = [
  ['/', () => <EndpointsPage />],
  ['/endpoints', () => <EndpointsPage />],
  ['/endpoints/new', () => <EndpointFormPage />],
  ['/endpoints/:id', (p) => <EndpointPage endpointId={p.id} />],
  ['/endpoints/:id/edit', (p) => <EndpointFormPage endpointId={p.id} />],
  ['/endpoints/:id/requests', (p) => <RequestsPage endpointId={p.id} />],
  ['/endpoints/:id/requests/:jobId', (p) => <JobPage endpointId={p.id} jobId={p.jobId} />],
  ['/templates', () => <TemplatesPage />],
  ['/secrets', () => <SecretsPage />],
  ['/pods', () => <PodsPage />],
  ['/keys', () => <ApiKeysPage />],
  ['/webhooks', () => <WebhooksPage />],
];

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const { path } = useLocation();

  const signOut = useCallback(() => {
    forgetKey();
    setSession(null);
    navigate('/');
  }, []);

  const open = useCallback(
    (api: ConsoleApi, key: Session['key']) =>
      setSession({ api, key, canWrite: canWrite(key), signOut }),
    [signOut],
  );

  // A reload keeps the tab's key: check it again (it may have been revoked meanwhile).
  useEffect(() => {
    const secret = storedKey();
    if (!secret) return;
    const api = new ConsoleApi(secret);
    api.currentKey().then(
      (key) => {
        open(api, key);
        setRestoring(false);
      },
      () => {
        forgetKey();
        setRestoring(false);
      },
    );
  }, [open]);

  if (restoring) return <p className="muted">Loading…</p>;
  if (!session)
    return (
      <LoginPage
        onSignedIn={(api, key, secret) => {
          storeKey(secret);
          open(api, key);
        }}
      />
    );

  const page = PAGES.map(([pattern, render]) => {
    const params = matchPath(pattern, path);
    return params && render(params);
  }).find(Boolean);
  return (
    <SessionContext.Provider value={session}>
      <Layout>{page ?? <p>There is no page at {path}.</p>}</Layout>
    </SessionContext.Provider>
  );
}
