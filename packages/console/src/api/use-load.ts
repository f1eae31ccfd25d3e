import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage } from './client';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when `deps` change (forgetting the data of the old ones) and again every `refreshMs`
 * (when given), keeping the last data while it refreshes; answers of an older run never overwrite a
 * newer one.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  refreshMs?: number,
): Loaded<T> {
  const [loaded, setLoaded] = useState<{ data: T; deps: readonly unknown[] }>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);

  useEffect(() => {
    const mine = ++run.current;
    setLoading(true);
    load().then(
      (value) => {
        if (mine !== run.current) return;
        setLoaded({ data: value, deps });
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (mine !== run.current) return;
        setError(errorMessage(err));
        setLoading(false);
      },
    );
    // `deps` stand for what `load` reads (it is a new closure on every render).
  }, [...deps, tick]);

  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(reload, refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs, reload]);

  // An answer for other arguments (another filter, another page) is not shown for these.
  const current = loaded && sameDeps(loaded.deps, deps) ? loaded.data : undefined;
  return { data: current, error, loading, reload };
}

/** Runs one action at a time; its error is kept until the next run. */
export function useAction(): {
  busy: boolean;
  error: string | null;
  run(action: () => Promise<unknown>): Promise<boolean>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(errorMessage(err));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

const sameDeps = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
