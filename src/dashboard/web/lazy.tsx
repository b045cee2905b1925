/**
 * A part of the dashboard loaded when first drawn: its script chunk (the world map's outlines
 * weigh ~100 KB) stays out of the first load of every other page.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

export function Lazy<M>({ load, render, fallback = null }: { load: () => Promise<M>; render: (module: M) => ComponentChildren; fallback?: ComponentChildren }) {
  const [module, setModule] = useState<M | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    load().then(
      (m) => !stopped && setModule(() => m),
      (err) => !stopped && setFailed(String(err)),
    );
    return () => {
      stopped = true;
    };
  }, []);
  if (failed) return <p class="error" role="alert">This part of the page did not load ({failed}); reload the page.</p>;
  return <>{module ? render(module) : fallback}</>;
}
