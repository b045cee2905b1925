/**
 * One file: its picture with the text OCR read drawn over it, a video with its keyframe strip
 * (each frame seeks the player), a document's text; title, tags and description editable;
 * delete and restore; similar images; retry of a failed file; sending it to a cloud drive.
 */
import { PhotoInfo, takenOf } from "./photo-info.tsx";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { DocumentLayout } from "./document-layout.tsx";
import { Markdown } from "./markdown.tsx";
import { SendToDrive } from "./send-to-drive.tsx";
import { formatBytes } from "../../byte-sizes.ts";

type Box = { x_min: number; y_min: number; x_max: number; y_max: number };
type Region = { text: string; bounding_box: Box; confidence: number; time_seconds?: number };

type Progress = { stage: string; stage_number: number; stage_count: number; percent: number; unit: string | null; done: number | null; total: number | null };

/** What each pipeline stage is doing, in words (a stage not listed shows its name). */
const STAGE_WORDS: Record<string, string> = {
  extraction: "reading the pages",
  summary: "summarizing",
  chunks: "storing the text",
  embeddings: "indexing for search",
  probe: "looking at the video",
  keyframes: "picking keyframes",
  ocr: "reading the text in it",
  variants: "making thumbnails",
  embedding: "learning what it looks like",
  duplicates: "looking for duplicates",
  objects: "finding objects",
  description: "describing it",
  custom_schema: "filling the extraction schema",
  compliance: "checking compliance",
  fetch: "fetching the page",
  metadata: "reading the page's details",
  favicon: "fetching the site's icon",
  text: "reading the article",
  snapshot: "saving a copy",
};

/** "Analysing: reading the pages, 3 of 10 pages (step 1 of 4, 25 %)", or the plain status before a stage has reported. */
export function progressLine(status: string, p: Progress | null): string {
  if (!p) return status === "queued" ? "Waiting for its turn to be analysed…" : `Analysing (${status})…`;
  const units = p.unit && p.total ? `, ${p.done ?? 0} of ${p.total} ${p.unit}${p.total === 1 ? "" : "s"}` : "";
  return `Analysing: ${STAGE_WORDS[p.stage] ?? p.stage}${units} (step ${p.stage_number} of ${p.stage_count}, ${p.percent} %)`;
}

function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function OcrOverlay({ src, regions, alt }: { src: string; regions: Region[]; alt: string }) {
  const [shown, setShown] = useState(true);
  return (
    <figure class="ocr">
      <div class="stage">
        <img src={src} alt={alt} />
        {shown
          ? regions.map((r, i) => (
              <span
                key={i}
                class="box"
                title={r.text}
                style={{ left: `${r.bounding_box.x_min * 100}%`, top: `${r.bounding_box.y_min * 100}%`, width: `${(r.bounding_box.x_max - r.bounding_box.x_min) * 100}%`, height: `${(r.bounding_box.y_max - r.bounding_box.y_min) * 100}%` }}
              />
            ))
          : null}
      </div>
      {regions.length ? (
        <figcaption>
          <label>
            <input type="checkbox" checked={shown} onChange={() => setShown(!shown)} /> Show text boxes ({regions.length})
          </label>
        </figcaption>
      ) : null}
    </figure>
  );
}

/**
 * Review of the text OCR read: each line confirmed, rejected or corrected. Corrections layer over
 * the original reading (PATCH …/extractions/text_regions/review); the original is kept.
 */
function RegionReview({ fileId, regions, onSaved }: { fileId: string; regions: (Region & { review?: string })[]; onSaved: () => void }) {
  const [status, setStatus] = useState<string | null>(null);
  async function review(body: Record<string, unknown>, done: string) {
    try {
      await api(`/files/${fileId}/extractions/text_regions/review`, { method: "PATCH", body });
      setStatus(done);
      onSaved();
    } catch (err) {
      setStatus(errorText(err));
    }
  }
  if (!regions.length) return null;
  return (
    <section>
      <h2>Review the text read</h2>
      <ol class="regions">
        {regions.map((r, i) => (
          <li key={i} class={r.review ?? ""}>
            <form
              class="row"
              onSubmit={(e) => {
                e.preventDefault();
                const text = ((e.currentTarget as HTMLFormElement).elements.namedItem("text") as HTMLInputElement).value;
                review({ field_edits: { [`regions.${i}.text`]: text } }, `Line ${i + 1} corrected`);
              }}
            >
              <label class="inline">
                <span class="visually-hidden">Line {i + 1}</span>
                <input name="text" defaultValue={r.text} />
              </label>
              <button type="submit">Correct</button>
              <button type="button" onClick={() => review({ item_reviews: { [`regions.${i}`]: "confirmed" } }, `Line ${i + 1} confirmed`)}>Confirm</button>
              <button type="button" class="danger" onClick={() => review({ item_reviews: { [`regions.${i}`]: "rejected" } }, `Line ${i + 1} rejected`)}>Reject</button>
            </form>
          </li>
        ))}
      </ol>
      {status ? <p role="status">{status}</p> : null}
    </section>
  );
}

/** Kinds this page draws with views of their own; any other registered kind is drawn by KindFields. */
const BUILT_IN_KINDS = ["image", "document", "video", "link"];
/** The File resource's fields every kind has (drawn elsewhere on the page). */
const COMMON_FIELDS = new Set(["id", "media_type", "title", "filename", "tags", "size_bytes", "content_type", "created_at", "updated_at", "content_created_at", "user_description", "upload_description", "visible_text", "source_url", "content_category", "project_id", "folder_id", "processing_status", "processing_error"]);

/** Another kind's own fields, as a list: its values, and its URLs as links. */
function KindFields({ file }: { file: any }) {
  const fields = Object.entries(file).filter(([key, value]) => !COMMON_FIELDS.has(key) && value !== null && (typeof value !== "object" || Array.isArray(value)));
  if (!fields.length) return null;
  return (
    <dl class="kind-fields">
      {fields.map(([key, value]) => (
        <div key={key}>
          <dt>{key.replaceAll("_", " ")}</dt>
          <dd>{key.endsWith("_url") ? <a href={String(value)}>Open</a> : Array.isArray(value) ? `${value.length} values` : String(value)}</dd>
        </div>
      ))}
    </dl>
  );
}


function VideoPlayer({ file }: { file: any }) {
  const player = useRef<HTMLVideoElement>(null);
  const seek = (t: number) => {
    if (!player.current) return;
    player.current.currentTime = t;
    player.current.focus();
  };
  return (
    <div class="video">
      <video ref={player} controls preload="metadata" src={file.video_url} poster={file.medium_url ?? undefined} aria-label={file.title ?? file.filename} />
      {file.keyframes?.length ? (
        <ol class="keyframes" aria-label="Keyframes">
          {file.keyframes.map((k: any) => (
            <li key={k.index}>
              <button type="button" onClick={() => seek(k.time_seconds)} aria-label={`Play from ${clock(k.time_seconds)}`}>
                <img src={k.url} alt="" loading="lazy" />
                <span>{clock(k.time_seconds)}</span>
              </button>
            </li>
          ))}
        </ol>
      ) : null}
    </div>
  );
}

function LinkView({ file }: { file: any }) {
  const og = file.og_metadata ?? {};
  return (
    <div class="link-view">
      <p class="site">
        {file.favicon_url ? <img src={file.favicon_url} alt="" width={24} height={24} /> : null}
        <a href={file.source_url} rel="noopener noreferrer" target="_blank">
          {file.source_url}
        </a>
      </p>
      <p>
        Crawl: {file.crawl_status}
        {/* A failed file's notice above already gives the reason. */}
        {file.crawl_error && file.processing_status !== "failed" ? ` — ${file.crawl_error}` : ""}
        {file.crawled_at ? ` · ${new Date(file.crawled_at).toLocaleString()}` : ""}
      </p>
      {og.site_name || og.author || og.published_at ? (
        <p class="meta">{[og.site_name, og.author, og.published_at ? new Date(og.published_at).toLocaleDateString() : null].filter(Boolean).join(" · ")}</p>
      ) : null}
      {file.snapshot_available ? (
        <p>
          {/* Served with a sandboxing CSP; a session cookie carries the credential (an API key cannot ride on a link). */}
          <a href={`/api/v2/files/${file.id}/snapshot`} target="_blank" rel="noopener">
            Read the saved copy
          </a>
        </p>
      ) : null}
      {file.extracted_images?.length ? (
        <>
          <h2>Images from the page ({file.extracted_images_count})</h2>
          <ul class="similar">
            {file.extracted_images.map((image: any) => (
              <li key={image.id}>
                <a href={`#/files/${image.id}`}>{image.thumbnail_url ? <img src={image.thumbnail_url} alt="" loading="lazy" /> : <span>image</span>}</a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}

function Editor({ file, onSaved }: { file: any; onSaved: (file: any) => void }) {
  const [title, setTitle] = useState(file.title ?? "");
  const [tags, setTags] = useState((file.tags ?? []).join(", "));
  const [description, setDescription] = useState(file.user_description ?? "");
  const [status, setStatus] = useState<string | null>(null);
  async function save(event: Event) {
    event.preventDefault();
    try {
      const tagList = tags.split(",").map((t: string) => t.trim()).filter(Boolean);
      const saved = await api(`/files/${file.id}`, { method: "PATCH", body: { title: title || null, tags: tagList, user_description: description || null } });
      setStatus("Saved");
      onSaved(saved);
    } catch (err) {
      setStatus(errorText(err));
    }
  }
  return (
    <form class="editor" onSubmit={save}>
      <label>
        Title
        <input value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Tags <span class="hint">(comma-separated)</span>
        <input value={tags} onInput={(e) => setTags((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Your description
        <textarea rows={3} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
      </label>
      <button type="submit">Save</button>
      {status ? <span role="status">{status}</span> : null}
    </form>
  );
}

/**
 * A document's keyphrases, offered as tags: Add makes one a tag (the ordinary tag edit), the
 * cross dismisses it for good. None is applied without the user.
 */
function SuggestedTags({ file, onChanged }: { file: any; onChanged: (change: { tags?: string[]; suggested_tags: string[] }) => void }) {
  const [status, setStatus] = useState<string | null>(null);
  const suggestions: string[] = file.suggested_tags ?? [];
  if (!suggestions.length) return null;
  const rest = (phrase: string) => suggestions.filter((p) => p !== phrase);
  async function accept(phrase: string) {
    try {
      const saved = await api(`/files/${file.id}`, { method: "PATCH", body: { tags: [...(file.tags ?? []), phrase] } });
      onChanged({ tags: saved.tags, suggested_tags: rest(phrase) });
      setStatus(`Tagged "${phrase}"`);
    } catch (err) {
      setStatus(errorText(err));
    }
  }
  async function dismiss(phrase: string) {
    try {
      await api(`/files/${file.id}/suggested-tags/${encodeURIComponent(phrase)}`, { method: "DELETE" });
      onChanged({ suggested_tags: rest(phrase) });
      setStatus(`Dismissed "${phrase}"`);
    } catch (err) {
      setStatus(errorText(err));
    }
  }
  return (
    <section aria-labelledby="suggested-title">
      <h2 id="suggested-title">Suggested tags</h2>
      <p class="hint">Key phrases read from the text. None is a tag until you add it.</p>
      <ul class="suggestions">
        {suggestions.map((phrase) => (
          <li key={phrase}>
            <button type="button" class="secondary" onClick={() => accept(phrase)} aria-label={`Add tag ${phrase}`}>+ {phrase}</button>
            <button type="button" class="secondary dismiss" onClick={() => dismiss(phrase)} aria-label={`Dismiss ${phrase}`}>×</button>
          </li>
        ))}
      </ul>
      {status ? <p role="status">{status}</p> : null}
    </section>
  );
}

/** A failed file says why, with a Retry that runs its processing again (POST /files/{id}/reprocess). */
function FailedNotice({ file, onRetried }: { file: any; onRetried: () => void }) {
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function retry() {
    setBusy(true);
    try {
      await api(`/files/${file.id}/reprocess`, { method: "POST" });
      setStatus("Queued again");
      onRetried();
    } catch (err) {
      setStatus(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="failed" role="alert">
      <p>
        <strong>Processing failed</strong>
        {file.processing_error ? `: ${file.processing_error}` : ""}
        {/* The crawl's reason is usually the processing error itself: said once. */}
        {file.media_type === "link" && file.crawl_error && !(file.processing_error ?? "").includes(file.crawl_error) ? ` (${file.crawl_error})` : ""}
      </p>
      <button type="button" onClick={retry} disabled={busy}>
        Retry
      </button>
      {status ? <span role="status"> {status}</span> : null}
    </div>
  );
}

export function FileDetail({ id }: { id: string }) {
  const [file, setFile] = useState<any>(null);
  const [similar, setSimilar] = useState<any[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [processing, setProcessing] = useState<string | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  // Bumped by a retry: the page watches the new processing run as it watched the first.
  const [round, setRound] = useState(0);
  const [sending, setSending] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const [tagsAdded, setTagsAdded] = useState(0);
  useEffect(() => {
    let stopped = false;
    if (round === 0) {
      setFile(null);
      setSimilar([]);
    }
    const show = () => {
      api(`/files/${id}`).then(
        (f) => {
          if (stopped) return;
          setFile(f);
          // Only images and videos have neighbours, and only once their embedding exists (409 before).
          if (f.similar_available) api(`/files/${id}/similar?limit=8`).then((r) => !stopped && setSimilar(r.items), () => setSimilar([]));
        },
        (err) => setError(errorText(err)),
      );
    };
    // While the file is being analysed, its page says so and fills in when the analysis ends.
    const watch = async () => {
      for (let pause = 1000; !stopped; pause = Math.min(pause * 1.5, 5000)) {
        const status = await api(`/files/uploads-status/${id}`).catch(() => null);
        if (!status || status.is_terminal) break;
        setProcessing(status.unified_status);
        setProgress(status.progress ?? null);
        await new Promise((r) => setTimeout(r, pause));
      }
      if (stopped) return;
      setProcessing(null);
      setProgress(null);
      show();
    };
    show();
    watch();
    return () => {
      stopped = true;
    };
  }, [id, round]);
  // A link's page images are files of their own, analysed after the crawl: look again until they have pictures.
  const imagesPending = file?.media_type === "link" && (file.extracted_images ?? []).some((i: any) => !i.thumbnail_url && i.variant_status !== "failed");
  useEffect(() => {
    if (!imagesPending) return;
    const timer = setTimeout(() => api(`/files/${id}`).then(setFile, () => null), 2000);
    return () => clearTimeout(timer);
  }, [file]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!file) return <p aria-live="polite">Loading…</p>;
  const name = file.title ?? file.filename;
  // The notice with the Retry button goes away: focus returns to the heading, above the "Analysing" status.
  function retried() {
    setProcessing("queued");
    setRound((r) => r + 1);
    document.getElementById("file-title")?.focus();
  }
  async function remove() {
    await api(`/files/${id}`, { method: "DELETE" });
    location.hash = "#/library";
  }
  return (
    <article class="detail" aria-labelledby="file-title">
      <p>
        <a href="#/library">← Library</a>
      </p>
      <h1 id="file-title" tabIndex={-1}>{name}</h1>
      {file.processing_status === "failed" && !processing ? <FailedNotice file={file} onRetried={retried} /> : null}
      {processing ? (
        <div class="processing" role="status">
          <p>{progressLine(processing, progress)}</p>
          {progress ? <progress max={100} value={progress.percent} aria-label="Analysis progress" /> : null}
        </div>
      ) : null}
      <p class="meta">
        {file.media_type} · {file.filename} · {formatBytes(file.size_bytes)}
        {file.resolution ? ` · ${file.resolution}` : ""}
        {file.duration_seconds ? ` · ${clock(file.duration_seconds)}` : ""}
        {file.content_created_at ? ` · taken ${(file.camera && takenOf(file.camera)) || new Date(file.content_created_at).toLocaleString()}` : ""}
      </p>
      {/* Wide screens: what the file shows on the left, what is known of it and what can be done on the right. */}
      <div class="detail-body">
        <div class="detail-main">
          {file.media_type === "image" && file.medium_url ? <OcrOverlay src={file.full_url ?? file.medium_url} regions={file.text_regions ?? []} alt={file.upload_description ?? name} /> : null}
          {file.media_type === "video" ? <VideoPlayer file={file} /> : null}
          {file.media_type === "link" ? <LinkView file={file} /> : null}
          {!BUILT_IN_KINDS.includes(file.media_type) ? <KindFields file={file} /> : null}
          {file.media_type === "document" ? (
            <div class="document">
              <p>
                {file.page_count != null ? `${file.page_count} page${file.page_count === 1 ? "" : "s"}, ${file.chunk_count} chunk${file.chunk_count === 1 ? "" : "s"} · ` : ""}
                text extraction {file.text_extraction_status ?? "pending"}
                {file.document_url ? <> · <a href={file.document_url}>Open</a></> : null}
              </p>
              {file.text_extraction_status === "completed" ? (
                <DocumentLayout id={file.id} pictured={file.document_type === "pdf"} name={name} fallbackText={file.extracted_text ?? null} />
              ) : file.extracted_text ? (
                <Markdown text={file.extracted_text.slice(0, 200_000)} label={`Text of ${name}`} />
              ) : null}
            </div>
          ) : null}
          {file.media_type === "image" ? <RegionReview fileId={file.id} regions={file.text_regions ?? []} onSaved={() => api(`/files/${id}`).then(setFile, () => null)} /> : null}
          {/* A document's text is drawn above; its visible_text is the same text again. */}
          {file.visible_text && file.media_type !== "document" ? (
            <section>
              <h2>Text in the {file.media_type}</h2>
              <pre class="text">{file.visible_text}</pre>
            </section>
          ) : null}
        </div>
        <div class="detail-side">
          {file.media_type === "image" || file.media_type === "video" ? <PhotoInfo camera={file.camera ?? null} location={file.location ?? null} /> : null}
          {file.upload_description ? (
            <section>
              <h2>Description</h2>
              <p>{file.upload_description}</p>
            </section>
          ) : null}
          <SuggestedTags file={file} onChanged={(change) => (setFile({ ...file, ...change }), change.tags && setTagsAdded((n) => n + 1))} />
          <section>
            <h2>Edit</h2>
            {/* Drawn afresh when a suggestion became a tag, so its tag field shows it (and a save keeps it). */}
            <Editor key={tagsAdded} file={file} onSaved={(saved) => setFile({ ...file, ...saved })} />
          </section>
          <p class="actions">
            {file.original_url ?? file.video_url ?? file.document_url ? (
              <a class="button" href={file.original_url ?? file.video_url ?? file.document_url} download={file.filename}>
                Download
              </a>
            ) : null}{" "}
            {file.media_type !== "link" ? (
              <button type="button" onClick={() => (setSending(!sending), setSent(null))} aria-expanded={sending}>
                Send to drive
              </button>
            ) : null}{" "}
            <button type="button" class="danger" onClick={remove}>
              Delete
            </button>
          </p>
        </div>
      </div>
      {similar.length ? (
        <section>
          <h2>Similar</h2>
          <ul class="similar">
            {similar.map((s) => (
              <li key={s.image_id}>
                <a href={`#/files/${s.image_id}`}>
                  {s.thumbnail_url ? <img src={s.thumbnail_url} alt={s.title ?? ""} loading="lazy" /> : null}
                  <span>
                    {Math.round(s.relevance_score * 100)} %{s.time_seconds != null ? ` at ${clock(s.time_seconds)}` : ""}
                  </span>
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {sending ? <SendToDrive fileIds={[file.id]} onDone={(message) => (setSent(message), setSending(false))} onCancel={() => setSending(false)} /> : null}
      {sent ? <p class="notice" role="status">{sent}</p> : null}
    </article>
  );
}
