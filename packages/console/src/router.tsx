import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

// A small history-API router: the console has a handful of pages, and the server answers each of
// their paths with index.html (its SPA fallback), so deep links and reloads work.

const NAVIGATED = 'runplane:navigate';

export function navigate(to: string): void {
  if (to === window.location.pathname + window.location.search) return;
  window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** The current path and query, re-rendering on navigation and on back/forward. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({
    path: window.location.pathname,
    query: new URLSearchParams(window.location.search),
  });
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const update = () => setLocation(read());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return location;
}

/** `pattern` such as `/endpoints/:id/jobs/:jobId` against `path`: its parameters, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(have[i]);
    else if (want[i] !== have[i]) return null;
  }
  return params;
}

/** An `<a>` that navigates inside the console (a modified click still opens a new tab). */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
      return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={onClick} {...rest} />;
}
