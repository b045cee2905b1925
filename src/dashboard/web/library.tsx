/** The library: every live file as a grid of thumbnails, with search, a media-type filter and sorting. */
import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import { BlurhashImage } from "./blurhash-image.tsx";

const PAGE = 60;
type Summary = { id: string; media_type: string; title: string | null; filename: string; thumbnail_url?: string | null; blur_hash?: string | null; created_at: string; duration_seconds?: number | null };

export function Library() {
  const [search, setSearch] = useState("");
  const [mediaType, setMediaType] = useState("");
  const [sort, setSort] = useState("created_at:desc");
  const [items, setItems] = useState<Summary[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);

  async function load(offset: number) {
    const [by, order] = sort.split(":");
    const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset), sort_by: by!, sort_order: order! });
    if (search.trim()) query.set("search", search.trim());
    if (mediaType) query.set("media_types", mediaType);
    setLoading(true);
    try {
      const page = await api<{ items: Summary[]; total_count: number }>(`/files?${query}`);
      setItems((current) => (offset === 0 ? page.items : [...current, ...page.items]));
      setTotal(page.total_count);
      setError(null);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setLoading(false);
    }
  }

  // A search waits for a pause in typing.
  useEffect(() => {
    const timer = setTimeout(() => load(0), search ? 250 : 0);
    return () => clearTimeout(timer);
  }, [search, mediaType, sort]);

  return (
    <section aria-labelledby="library-title">
      <h1 id="library-title">Library</h1>
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
            <option value="title:asc">Title</option>
            <option value="size_bytes:desc">Largest</option>
          </select>
        </label>
      </form>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <p class="count" aria-live="polite">{loading && !items.length ? "Loading…" : `${total} file${total === 1 ? "" : "s"}`}</p>
      <ul class="grid">
        {items.map((file) => (
          <li key={file.id}>
            <a href={`#/files/${file.id}`} class="card">
              <BlurhashImage src={file.thumbnail_url ?? null} hash={file.blur_hash ?? null} alt="" />
              <span class="name">{file.title ?? file.filename}</span>
              <span class={`badge ${file.media_type}`}>{file.media_type}</span>
            </a>
          </li>
        ))}
      </ul>
      {items.length < total ? (
        <button type="button" onClick={() => load(items.length)} disabled={loading}>
          {loading ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </section>
  );
}
