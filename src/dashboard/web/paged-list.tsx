/**
 * A list read page by page from an API listing (`{items, total_count}` with limit and offset):
 * the first page at once, the next on `more()`; `reload()` reads again as many as are shown
 * (after a change), `drop()` takes items out of the page without asking the server.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

export interface PagedList<T> {
  items: T[];
  total: number;
  loaded: boolean;
  loading: boolean;
  error: string | null;
  more: () => Promise<void>;
  reload: () => Promise<void>;
  drop: (keep: (item: T) => boolean) => void;
}

/** `path` may carry its own query; `null` reads nothing (yet). */
export function usePagedList<T>(path: string | null, pageSize: number): PagedList<T> {
  const [items, setItems] = useState<T[]>([]);
  const [total, setTotal] = useState(0);
  const [loaded, setLoaded] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function load(offset: number, limit: number, replace: boolean) {
    if (!path) return;
    setLoading(true);
    try {
      const page = await api<{ items: T[]; total_count: number }>(`${path}${path.includes("?") ? "&" : "?"}limit=${limit}&offset=${offset}`);
      setItems((current) => (replace ? page.items : [...current, ...page.items]));
      setTotal(page.total_count);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoading(false);
      setLoaded(true);
    }
  }
  useEffect(() => {
    setItems([]);
    setLoaded(false);
    void load(0, pageSize, true);
  }, [path]);

  return {
    items,
    total,
    loaded,
    loading,
    error,
    more: () => load(items.length, pageSize, false),
    reload: () => load(0, Math.min(100, Math.max(pageSize, items.length)), true),
    drop: (keep) => {
      const kept = items.filter(keep);
      setItems(kept);
      setTotal(Math.max(0, total - (items.length - kept.length)));
    },
  };
}

/** "Show more …" under a list while the server holds more of it. */
export function ShowMore({ list, label, secondary = true }: { list: PagedList<unknown>; label: string; secondary?: boolean }) {
  if (list.items.length >= list.total) return null;
  return (
    <button type="button" class={secondary ? "secondary" : undefined} onClick={list.more} disabled={list.loading}>
      {list.loading ? "Loading…" : label}
    </button>
  );
}
