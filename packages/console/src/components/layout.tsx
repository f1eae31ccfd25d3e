import type { ReactNode } from 'react';
import { useSession } from '../api/session-context';
import { Link, useLocation } from '../router';

const NAV = [
  { to: '/', label: 'Endpoints', section: 'endpoints' },
  { to: '/templates', label: 'Templates', section: 'templates' },
  { to: '/secrets', label: 'Secrets', section: 'secrets' },
  { to: '/pods', label: 'Pods', section: 'pods' },
  { to: '/keys', label: 'API keys', section: 'keys' },
  { to: '/webhooks', label: 'Webhooks', section: 'webhooks' },
];

/** The frame of every signed-in page: navigation, who is signed in, sign out. */
export function Layout({ children }: { children: ReactNode }) {
  const { key, signOut } = useSession();
  const { path } = useLocation();
  const section = path.split('/')[1] || 'endpoints';
  return (
    <div className="layout">
      <header className="topbar">
        <span className="brand">Runplane</span>
        <nav aria-label="Main">
          {NAV.map((item) => (
            <Link
              key={item.to}
              to={item.to}
              aria-current={item.section === section ? 'page' : undefined}
            >
              {item.label}
            </Link>
          ))}
        </nav>
        <span className="who" title={`user ${key.userId}`}>
          {key.name} <span className="badge">{key.scope}</span>
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>{children}</main>
    </div>
  );
}
