/**
 * Watched folders: read only. The server's administrator names them (MEDIABOX_WATCH_DIR or
 * `mediabox watch DIR --org ...`); the page shows each with what it took lately and where each
 * file went.
 */
import { useState } from "preact/hooks";
import { api } from "./api.ts";
import { usePolling } from "./polling.ts";

type Item = { id: string; rel_path: string; size_bytes: number; file_id: string; status: string; error: string | null; moved_to: string | null; created_at: string };
type Watched = { id: string; path: string; origin: string; active: boolean; last_scan_at: string | null; last_error: string | null; counts: { ingesting: number; done: number; failed: number }; recent_items: Item[] };

export function AutomationWatched() {
  const [items, setItems] = useState<Watched[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  usePolling(() => api("/watched-folders?recent=30").then((r) => setItems(r.items), (err) => setProblem(err.message)), 3000, []);
  return (
    <div>
      <h2>Watched folders</h2>
      <p class="hint">
        Added by the server's administrator: <code>MEDIABOX_WATCH_DIR=/srv/scans=Organization/Project/Folder</code> or <code>mediabox watch DIR --org NAME</code>. Files
        that appear there are stored, then moved to <code>done/</code> or <code>failed/</code> (with a reason file).
      </p>
      <p class="error" role="alert">{problem ?? ""}</p>
      {items && !items.length ? <p>No watched folder for this organization.</p> : null}
      {items?.map((w) => (
        <div key={w.id} class="watched">
          <h3>{w.path}</h3>
          <p class="hint">
            {w.active ? "watched" : "not watched any more"} ({w.origin === "setting" ? "MEDIABOX_WATCH_DIR" : "mediabox watch"}); last look {w.last_scan_at ? new Date(w.last_scan_at).toLocaleString() : "never"};
            {" "}{w.counts.done} stored, {w.counts.failed} refused, {w.counts.ingesting} in progress
          </p>
          {w.last_error ? <p class="error">{w.last_error}</p> : null}
          <table class="plain">
            <thead>
              <tr><th>File</th><th>Status</th><th>Moved to</th><th>When</th></tr>
            </thead>
            <tbody>
              {w.recent_items.map((i) => (
                <tr key={i.id}>
                  <td>{i.status === "done" ? <a href={`#/files/${i.file_id}`}>{i.rel_path}</a> : i.rel_path}</td>
                  <td>{i.status}{i.error ? `: ${i.error}` : ""}</td>
                  <td>{i.moved_to ?? ""}</td>
                  <td>{new Date(i.created_at).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
}
