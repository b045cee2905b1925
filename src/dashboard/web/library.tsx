/**
 * The library: every live file as a grid of thumbnails, narrowed by project or folder, search,
 * media type and sort, in a virtual grid (only the rows near the viewport are in the page); more
 * pages load as the end of the grid comes into view. Files can be
 * selected (checkboxes, keyboard included) for batch tagging, CSV export, sending to a cloud
 * drive and deletion (with undo; the Trash page restores later).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import { BlurhashImage } from "./blurhash-image.tsx";
import { Places, type Place } from "./places.tsx";
import { SendToDrive } from "./send-to-drive.tsx";
import { VirtualGrid } from "./virtual-grid.tsx";
import { formatBytes } from "../../byte-sizes.ts";
import { MoveFiles } from "./move-files.tsx";

const PAGE = 60;
/** A PDF's first page as its thumbnail (drawn by the server once, then kept). */
function firstPage(id: string): Promise<string | null> {
  return api<{ url: string }>(`/files/${id}/digitization/pages/1/image?width=320&redirect=false`).then((r) => r.url, () => null);
}

type Summary = { document_type?: string | null; page_count?: number | null; id: string; media_type: string; title: string | null; filename: string; tags: string[]; size_bytes?: number; thumbnail_url?: string | null; blur_hash?: string | null; created_at: string };

function BatchBar({ selected, onDone, clear }: { selected: Summary[]; onDone: (message: string, undo?: () => Promise<void>) => void; clear: () => void }) {
  const [tag, setTag] = useState("");
  const [busy, setBusy] = useState(false);
  const [sending, setSending] = useState(false);
  const [moving, setMoving] = useState(false);
  async function run(action: () => Promise<void>) {
    setBusy(true);
    try {
      await action();
    } catch (err) {
      onDone(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }
  const addTag = () =>
    run(async () => {
      const clean = tag.trim();
      if (!clean) return;
      for (const file of selected) await api(`/files/${file.id}`, { method: "PATCH", body: { tags: [...new Set([...(file.tags ?? []), clean])] } });
      setTag("");
      onDone(`Tagged ${selected.length} file(s) "${clean}"`);
    });
  const exportCsv = () =>
    run(async () => {
      const answer = await api("/files/export", { method: "POST", body: { format: "csv", file_ids: selected.map((f) => f.id), columns: ["filename", "title", "media_type", "tags", "description", "size_bytes", "created_at"].map((field_key) => ({ field_key })) } });
      location.assign(answer.download_url);
      onDone(`Exported ${answer.record_count} file(s)`);
    });
  const remove = () =>
    run(async () => {
      const ids = selected.map((f) => f.id);
      const answer = await api<{ deleted: { id: string }[]; failed: { id: string; message: string }[] }>("/files/batch-delete", { method: "POST", body: { file_ids: ids } });
      const deleted = answer.deleted.map((d) => d.id);
      // A document being embedded cannot be deleted yet (409 FILE_BUSY): say which and why.
      const refused = answer.failed.map((f) => `${selected.find((s) => s.id === f.id)?.filename ?? f.id}: ${f.message}`);
      const message = `Deleted ${deleted.length} file(s)${refused.length ? `; not deleted: ${refused.join("; ")}` : ""}`;
      onDone(message, deleted.length ? async () => {
        for (const id of deleted) await api(`/files/${id}/restore`, { method: "POST" });
      } : undefined);
    });
  return (
    <div class="batch" role="region" aria-label="Selected files">
      <strong>{selected.length} selected</strong>
      <label class="inline">
        <span class="visually-hidden">Tag to add</span>
        <input value={tag} onInput={(e) => setTag((e.target as HTMLInputElement).value)} placeholder="tag" maxLength={50} />
      </label>
      <button type="button" disabled={busy || !tag.trim()} onClick={addTag}>
        Add tag
      </button>
      <button type="button" disabled={busy} onClick={exportCsv}>
        Export CSV
      </button>
      <button type="button" disabled={busy} onClick={() => (setMoving(!moving), setSending(false))} aria-expanded={moving}>
        Move
      </button>
      <button type="button" disabled={busy} onClick={() => (setSending(!sending), setMoving(false))} aria-expanded={sending}>
        Send to drive
      </button>
      <button type="button" class="danger" disabled={busy} onClick={remove}>
        Delete
      </button>
      <button type="button" class="link" onClick={clear}>
        Clear selection
      </button>
      {moving ? <MoveFiles fileIds={selected.map((f) => f.id)} onDone={(message) => onDone(message)} onCancel={() => setMoving(false)} /> : null}
      {sending ? <SendToDrive fileIds={selected.map((f) => f.id)} onDone={(message) => onDone(message)} onCancel={() => setSending(false)} /> : null}
    </div>
  );
}

/** A screen wide enough to show the sidebar and every filter at once (read once, when the page opens). */
export function useWide(): boolean {
  const [wide] = useState(() => matchMedia("(min-width: 901px)").matches);
  return wide;
}

export function Library({ canEdit = true }: { canEdit?: boolean }) {
  const wide = useWide();
  const [place, setPlace] = useState<Place>({ projectId: null, folderId: null, label: "All files" });
  const [search, setSearch] = useState("");
  const [mediaType, setMediaType] = useState("");
  const [sort, setSort] = useState("created_at:desc");
  const [tags, setTags] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [compliance, setCompliance] = useState("");
  const [view, setView] = useState<"grid" | "list">("grid");
  const [items, setItems] = useState<Summary[]>([]);
  const [total, setTotal] = useState(0);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [notice, setNotice] = useState<{ message: string; undo?: () => Promise<void> } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const noticeRef = useRef<HTMLParagraphElement>(null);
  // Only the newest listing request is shown: an older one answering late (a refresh after a batch
  // action, then a filter change) would put the old filter's files back on screen.
  const newestLoad = useRef(0);
  // A batch action removes the bar that had focus: focus goes to its outcome (and its Undo), not to the page's top.
  useEffect(() => {
    if (notice) noticeRef.current?.focus();
  }, [notice]);

  async function load(offset: number) {
    const [by, order] = sort.split(":");
    // The grid shows no text: a page of documents would otherwise bring up to 200,000 characters each.
    const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset), sort_by: by!, sort_order: order!, visible_text_chars: "0" });
    if (search.trim()) query.set("search", search.trim());
    if (mediaType) query.set("media_types", mediaType);
    if (place.projectId) query.set("project_id", place.projectId);
    if (place.folderId) query.set("folder_id", place.folderId);
    for (const tag of tags.split(",").map((t) => t.trim()).filter(Boolean)) query.append("tags", tag);
    if (from) query.set("date_from", new Date(`${from}T00:00:00`).toISOString());
    if (to) query.set("date_to", new Date(`${to}T23:59:59.999`).toISOString());
    if (compliance) query.set("compliance_status", compliance);
    const ticket = ++newestLoad.current;
    setLoading(true);
    try {
      const page = await api<{ items: Summary[]; total_count: number }>(`/files?${query}`);
      if (ticket !== newestLoad.current) return;
      setItems((current) => (offset === 0 ? page.items : [...current, ...page.items]));
      setTotal(page.total_count);
      setError(null);
    } catch (err) {
      if (ticket !== newestLoad.current) return;
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      if (ticket === newestLoad.current) setLoading(false);
    }
  }

  // A search waits for a pause in typing.
  useEffect(() => {
    const timer = setTimeout(() => load(0), search ? 250 : 0);
    return () => clearTimeout(timer);
  }, [search, mediaType, sort, place, tags, from, to, compliance]);

  const filtered = Boolean(search.trim() || mediaType || tags.trim() || from || to || compliance);
  const clearFilters = () => {
    setSearch("");
    setMediaType("");
    setTags("");
    setFrom("");
    setTo("");
    setCompliance("");
  };

  const toggle = (id: string) =>
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  return (
    <div class="library">
      <Places place={place} open={wide} canEdit={canEdit} onChoose={(p) => (setPlace(p), setSelected(new Set()))} onMessage={(message) => setNotice({ message })} />
      <section aria-labelledby="library-title">
        <h1 id="library-title" tabIndex={-1}>
          Library{place.label !== "All files" ? `: ${place.label}` : ""}
        </h1>
        <form class="filters" role="search" onSubmit={(e) => (e.preventDefault(), load(0))}>
          <label>
            Search
            <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} placeholder="Titles, tags, text in images…" />
          </label>
          <label>
            Type
            <select value={mediaType} onChange={(e) => setMediaType((e.target as HTMLSelectElement).value)}>
              <option value="">All</option>
              <option value="image">Images</option>
              <option value="document">Documents</option>
              <option value="video">Videos</option>
              <option value="link">Links</option>
            </select>
          </label>
          <label>
            Sort
            <select value={sort} onChange={(e) => setSort((e.target as HTMLSelectElement).value)}>
              <option value="created_at:desc">Newest first</option>
              <option value="created_at:asc">Oldest first</option>
              <option value="content_created_at:desc">Taken, newest first</option>
              <option value="title:asc">Title</option>
              <option value="size_bytes:desc">Largest</option>
            </select>
          </label>
        </form>
        {/* Folded on phones, where the first screen should show files rather than fields. */}
        <details class="more-filters" open={wide}>
          <summary>More filters and view</summary>
          <form class="filters more" onSubmit={(e) => e.preventDefault()}>
            <label>
              Tags <span class="hint">(all of, comma-separated)</span>
              <input value={tags} onChange={(e) => setTags((e.target as HTMLInputElement).value)} />
            </label>
            <label>
              Added from
              <input type="date" value={from} onChange={(e) => setFrom((e.target as HTMLInputElement).value)} />
            </label>
            <label>
              Added until
              <input type="date" value={to} onChange={(e) => setTo((e.target as HTMLInputElement).value)} />
            </label>
            <label>
              Compliance
              <select value={compliance} onChange={(e) => setCompliance((e.target as HTMLSelectElement).value)}>
                <option value="">Any</option>
                <option value="pass">Pass</option>
                <option value="fail">Fail</option>
              </select>
            </label>
            <fieldset class="view-switch">
              <legend class="visually-hidden">View</legend>
              <label class="inline"><input type="radio" name="view" checked={view === "grid"} onChange={() => setView("grid")} /> Grid</label>
              <label class="inline"><input type="radio" name="view" checked={view === "list"} onChange={() => setView("list")} /> List</label>
            </fieldset>
          </form>
        </details>
        {error ? <p class="error" role="alert">{error}</p> : null}
        {notice ? (
          <p class="notice" role="status" tabIndex={-1} ref={noticeRef}>
            {notice.message}{" "}
            {notice.undo ? (
              <button
                type="button"
                class="link"
                onClick={async () => {
                  await notice.undo!();
                  setNotice({ message: "Restored" });
                  load(0);
                }}
              >
                Undo
              </button>
            ) : null}
            {/* Only a deletion offers Undo; later, the Trash page restores it. */}
            {notice.undo ? <span> (or later from the <a href="#/trash">Trash</a>, for 30 days)</span> : null}
          </p>
        ) : null}
        {selected.size ? (
          <BatchBar
            selected={items.filter((f) => selected.has(f.id))}
            clear={() => setSelected(new Set())}
            onDone={(message, undo) => {
              setNotice({ message, ...(undo ? { undo } : {}) });
              setSelected(new Set());
              load(0);
            }}
          />
        ) : null}
        <p class="count" aria-live="polite">{loading && !items.length ? "Loading…" : `${total} file${total === 1 ? "" : "s"}`}</p>
        {!loading && !error && total === 0 ? (
          filtered ? (
            <div class="empty-library">
              <p>No file matches {place.label !== "All files" ? `in ${place.label} with ` : ""}these filters.</p>
              <button type="button" class="secondary" onClick={clearFilters}>Clear the filters</button>
            </div>
          ) : place.label !== "All files" ? (
            <div class="empty-library">
              <p>{place.label} holds no files yet. Files uploaded or moved here appear in it; the selection bar's Move puts files from elsewhere here.</p>
            </div>
          ) : (
            <div class="empty-library">
              <h2>Nothing here yet: add your first files</h2>
              <p>Mediabox reads what you give it: text in photos and scans, the pages of PDFs and Word files, the frames of videos, saved web pages. Then search finds them by what they say.</p>
              <ul>
                <li><a href="#/upload">Upload files</a>: drop photos, PDFs, DOCX, text, Markdown or videos, or a whole folder; or save a web page by its address.</li>
                <li><a href="#/cloud">Import from a cloud drive</a> once one is connected.</li>
                <li>From a terminal, a whole directory: <code>mediabox import DIR --recursive --wait</code> (with an API key; see the README).</li>
              </ul>
            </div>
          )
        ) : null}
        {view === "list" ? (
          <table class="file-list">
            <thead>
              <tr>
                <th scope="col"><span class="visually-hidden">Select</span></th>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Size</th>
                <th scope="col">Added</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {items.map((file) => (
                <tr key={file.id} class={selected.has(file.id) ? "selected" : ""}>
                  <td><input type="checkbox" checked={selected.has(file.id)} onChange={() => toggle(file.id)} aria-label={`Select ${file.title ?? file.filename}`} /></td>
                  <td><a href={`#/files/${file.id}`}>{file.title ?? file.filename}</a></td>
                  <td>{file.media_type}</td>
                  <td>{file.size_bytes !== undefined ? formatBytes(file.size_bytes) : ""}</td>
                  <td>{new Date(file.created_at).toLocaleDateString()}</td>
                  <td>{(file.tags ?? []).join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <VirtualGrid
            items={items}
            keyOf={(file) => file.id}
            onNearEnd={() => !loading && items.length < total && load(items.length)}
            render={(file) => (
              <div class={`cell ${selected.has(file.id) ? "selected" : ""}`}>
                <input type="checkbox" class="pick" checked={selected.has(file.id)} onChange={() => toggle(file.id)} aria-label={`Select ${file.title ?? file.filename}`} />
                <a href={`#/files/${file.id}`} class="card">
                  <BlurhashImage
                    src={file.thumbnail_url ?? null}
                    hash={file.blur_hash ?? null}
                    alt=""
                    label={file.filename.includes(".") ? file.filename.split(".").pop()!.toUpperCase().slice(0, 5) : file.media_type}
                    {...(file.document_type === "pdf" && file.page_count ? { pictureOf: () => firstPage(file.id) } : {})}
                  />
                  <span class="name">{file.title ?? file.filename}</span>
                  <span class={`badge ${file.media_type}`}>{file.media_type}</span>
                </a>
              </div>
            )}
          />
        )}
        {items.length < total ? (
          <button type="button" onClick={() => load(items.length)} disabled={loading}>
            {loading ? "Loading…" : "Load more"}
          </button>
        ) : null}
      </section>
    </div>
  );
}
