import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage } from './client';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when `deps` change and again every `refreshMs` (when given), keeping the last data
 * while it reloads; answers of an older run never overwrite a newer one.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  refreshMs?: number,
): Loaded<T> {
  const [data, setData] = useState<T>();
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
        setData(value);
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

  return { data, error, loading, reload };
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
