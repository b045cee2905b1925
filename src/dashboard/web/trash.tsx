/**
 * Trash: the files deleted in the last 30 days (GET /files/deleted), with when each goes for
 * good, and their restore (POST /files/{id}/restore) one by one or as a selection.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { ShowMore, usePagedList } from "./paged-list.tsx";
import { formatBytes } from "../../byte-sizes.ts";

const PAGE = 50;
type Deleted = { id: string; media_type: string; title: string | null; filename: string; size_bytes: number; deleted_at: string; purge_at: string };
type Outcome = { message: string; restored: Deleted[] };

const nameOf = (file: Deleted) => file.title ?? file.filename;
const DAY = 86_400_000;

/** "12 Dec 2026 (in 29 days)": the date, and how long is left in words. */
function removedWhen(purgeAt: string): string {
  const at = Date.parse(purgeAt);
  const days = Math.max(0, Math.ceil((at - Date.now()) / DAY));
  const left = days === 0 ? "today" : days === 1 ? "tomorrow" : `in ${days} days`;
  return `${new Date(at).toLocaleDateString()} (${left})`;
}

export function Trash() {
  const list = usePagedList<Deleted>("/files/deleted", PAGE);
  const { items, total, loaded } = list;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);
  // A restored row (and with a selection, the bar) leaves the page with the focus: focus goes to what happened.
  useEffect(() => {
    if (outcome) outcomeRef.current?.focus();
  }, [outcome]);

  /** Restores each file on its own, so one refusal never keeps the others in the trash. */
  async function restore(files: Deleted[]) {
    setBusy(true);
    setError(null);
    const restored: Deleted[] = [];
    const refused: string[] = [];
    for (const file of files) {
      try {
        await api(`/files/${file.id}/restore`, { method: "POST" });
        restored.push(file);
      } catch (err) {
        refused.push(`${nameOf(file)}: ${errorText(err)}`);
      }
    }
    const done = restored.length === 1 ? `Restored ${nameOf(restored[0]!)}` : restored.length ? `Restored ${restored.length} files` : "Nothing was restored";
    setOutcome({ message: `${done}${refused.length ? `; not restored: ${refused.join("; ")}` : ""}.`, restored });
    setSelected(new Set());
    setBusy(false);
    await list.reload();
  }

  const toggle = (id: string) =>
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const allShown = items.length > 0 && items.every((f) => selected.has(f.id));

  return (
    <section aria-labelledby="trash-title">
      <h1 id="trash-title" tabIndex={-1}>Trash</h1>
      <p class="hint">Deleted files stay here for 30 days and can be restored until then; after that they are removed for good.</p>
      {error ?? list.error ? <p class="error" role="alert">{error ?? list.error}</p> : null}
      {outcome ? (
        <p class="notice" role="status" tabIndex={-1} ref={outcomeRef}>
          {outcome.message}{" "}
          {outcome.restored.length === 1 ? <a href={`#/files/${outcome.restored[0]!.id}`}>Open it</a> : outcome.restored.length ? <a href="#/library">Open the library</a> : null}
        </p>
      ) : null}
      {selected.size ? (
        <div class="batch" role="region" aria-label="Selected files">
          <strong>{selected.size} selected</strong>
          <button type="button" disabled={busy} onClick={() => restore(items.filter((f) => selected.has(f.id)))}>
            Restore selected
          </button>
          <button type="button" class="link" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        </div>
      ) : null}
      {/* One live line says what the list holds: loading, how many, or that there is nothing. */}
      <p class={loaded && total === 0 ? "empty" : "count"} aria-live="polite">
        {!loaded ? "Loading…" : total === 0 ? "The trash is empty. Files you delete from the library appear here for 30 days." : `${total} file${total === 1 ? "" : "s"} in the trash`}
      </p>
      {items.length ? (
        <table class="file-list trash">
          <thead>
            <tr>
              <th scope="col">
                <input type="checkbox" checked={allShown} onChange={() => setSelected(allShown ? new Set() : new Set(items.map((f) => f.id)))} aria-label="Select all shown" />
              </th>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Size</th>
              <th scope="col">Deleted</th>
              <th scope="col">Removed for good</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {items.map((file) => (
              <tr key={file.id} class={selected.has(file.id) ? "selected" : ""}>
                <td><input type="checkbox" checked={selected.has(file.id)} onChange={() => toggle(file.id)} aria-label={`Select ${nameOf(file)}`} /></td>
                <td class="name">{nameOf(file)}</td>
                <td><span class={`badge ${file.media_type}`}>{file.media_type}</span></td>
                <td>{formatBytes(file.size_bytes)}</td>
                <td>{new Date(file.deleted_at).toLocaleString()}</td>
                <td>{removedWhen(file.purge_at)}</td>
                <td>
                  <button type="button" class="secondary" disabled={busy} onClick={() => restore([file])} aria-label={`Restore ${nameOf(file)}`}>
                    Restore
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <ShowMore list={list} label="Load more" secondary={false} />
    </section>
  );
}
