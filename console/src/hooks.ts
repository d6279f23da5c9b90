// Loading, polling and keyset paging, shared by the pages.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** What a load has given so far: the last data, the last error, and whether one runs. */
export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  /** When the data shown arrived. */
  readonly loadedAt: Date | undefined;
  /** Runs the load again, keeping the data shown until the answer (no flicker on refresh). */
  readonly reload: () => void;
}

/**
 * Runs `load` when `deps` change and on `reload()`. An answer that arrives after a newer
 * load started is dropped, so a slow page never overwrites a newer one.
 *
 * @param load - fetches the data.
 * @param deps - what the load depends on.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{
    data?: T;
    error?: unknown;
    loading: boolean;
    loadedAt?: Date;
  }>({ loading: true });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => {
        if (ticket === latest.current) setState({ data, loading: false, loadedAt: new Date() });
      },
      (error: unknown) => {
        if (ticket === latest.current)
          setState((previous) => ({ ...previous, error, loading: false }));
      },
    );
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  const { data, error, loading, loadedAt } = state;
  return { data, error, loading, loadedAt, reload };
}

/**
 * Calls `callback` every `ms` milliseconds while `ms` is not `null`, and stops when the
 * page goes away.
 *
 * @param callback - what to run; the latest one passed is called.
 * @param ms - the period, or `null` for none.
 */
export function useInterval(callback: () => void, ms: number | null): void {
  const saved = useRef(callback);
  saved.current = callback;
  useEffect(() => {
    if (ms === null) return undefined;
    const timer = setInterval(() => saved.current(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}

/** Where a keyset-paginated list is, and the moves between its pages. */
export interface Pager {
  /** The cursor of the page shown; `undefined` for the first (newest) page. */
  readonly cursor: string | undefined;
  /** 1 for the first page. */
  readonly page: number;
  /** Goes to the page after this one, whose cursor the API returned as `next_cursor`. */
  readonly older: (nextCursor: string) => void;
  /** Goes back one page. */
  readonly newer: () => void;
  /** Back to the first page (after a change of filters). */
  readonly reset: () => void;
}

/**
 * Keyset paging: the cursors of the pages visited are kept, so "newer" goes back
 * through them (the API only gives the way forward).
 */
export function usePager(): Pager {
  const [cursors, setCursors] = useState<readonly string[]>([]);
  return {
    cursor: cursors.at(-1),
    page: cursors.length + 1,
    older: (nextCursor) => setCursors((visited) => [...visited, nextCursor]),
    newer: () => setCursors((visited) => visited.slice(0, -1)),
    reset: () => setCursors([]),
  };
}
