import { useState, type FormEvent } from 'react';
import { ConsoleApi, errorMessage } from '../api/client';
import type { Session } from '../api/session-context';

/** One password field: the key is checked against the server before it is kept. */
export function LoginPage({
  onSignedIn,
}: {
  onSignedIn(api: ConsoleApi, key: Session['key'], secret: string): void;
}) {
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const api = new ConsoleApi(secret.trim());
    try {
      onSignedIn(api, await api.currentKey(), secret.trim());
    } catch (err) {
      const status = (err as { status?: number }).status;
      setError(status === 401 ? 'This API key was refused.' : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Runplane console</h1>
        <p className="muted">
          Sign in with an API key. It is kept in this browser tab only, until you sign out or close
          it.
        </p>
        <div className="field">
          <label htmlFor="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="current-password"
            required
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy || !secret.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
