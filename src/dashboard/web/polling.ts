/**
 * Pages that follow work in progress (uploads, jobs, deliveries) ask the server again every few
 * seconds while they are shown.
 */
import { useEffect } from "preact/hooks";

/** Runs `load` now and every `everyMs` while the component is shown; from the start again when `deps` change (a filter, a page). */
export function usePolling(load: () => unknown, everyMs: number, deps: readonly unknown[]): void {
  useEffect(() => {
    void load();
    const timer = setInterval(load, everyMs);
    return () => clearInterval(timer);
  }, deps);
}
