/**
 * Upload: files dropped or chosen, each hashed and checked against the library first (a
 * duplicate is pointed at, not stored twice), then sent with its own progress bar: small files
 * by streaming upload, large ones through an upload intent straight to the blob store (resumable
 * after a reload by choosing the same file again).
 */
import { useState } from "preact/hooks";
import { api, ApiFailure, uploadFile } from "./api.ts";
import { hashFile, LARGE_FILE_BYTES, uploadLargeFile, type Progress } from "./large-upload.ts";

type Item = { name: string; progress: number; phase: string; state: "working" | "stored" | "duplicate" | "refused"; message: string; id?: string };

const PHASES: Record<Progress["phase"], string> = { hashing: "checking", uploading: "uploading", completing: "completing" };

export function Upload() {
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);

  function update(index: number, change: Partial<Item>) {
    setItems((current) => current.map((item, i) => (i === index ? { ...item, ...change } : item)));
  }

  async function sendOne(file: File, index: number) {
    const progress = (p: Progress) => update(index, { phase: PHASES[p.phase], progress: p.phase === "hashing" ? 0 : p.fraction });
    try {
      const hash = await hashFile(file, progress);
      const known = await api("/files/check-duplicates", { method: "POST", body: { hashes: [hash] } });
      const match = known.matches?.[0];
      if (match) {
        update(index, { state: "duplicate", progress: 1, id: match.file_id, message: `already in the library as ${match.filename}` });
        return;
      }
      if (file.size > LARGE_FILE_BYTES) {
        const done = await uploadLargeFile(file, hash, progress);
        update(index, { state: done.deduplicated ? "duplicate" : "stored", progress: 1, id: done.file_id, message: `${done.media_type}, ${done.status}` });
      } else {
        update(index, { phase: "uploading" });
        const answer = await uploadFile(file, (fraction) => update(index, { progress: fraction }));
        update(index, { state: "stored", progress: 1, id: answer.image_id, message: `${answer.media_type}, ${answer.status}` });
      }
    } catch (err) {
      update(index, { state: "refused", message: err instanceof ApiFailure ? err.message : String(err) });
    }
  }

  async function send(files: File[]) {
    const start = items.length;
    setItems((current) => [...current, ...files.map((f) => ({ name: f.name, progress: 0, phase: "waiting", state: "working" as const, message: "" }))]);
    // Three at a time: enough to fill the line, few enough to stay inside the tier's concurrency.
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const index = next++;
        await sendOne(files[index]!, start + index);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
  }

  const [url, setUrl] = useState("");
  async function saveLink(event: Event) {
    event.preventDefault();
    const index = items.length;
    const address = url.trim();
    if (!address) return;
    setItems((current) => [...current, { name: address, progress: 0, phase: "saving", state: "working" as const, message: "" }]);
    setUrl("");
    try {
      const saved = await api("/files/links", { method: "POST", body: { url: address } });
      update(index, { state: "stored", progress: 1, id: saved.id, message: `link, crawl ${saved.crawl_status}` });
    } catch (err) {
      update(index, { state: "refused", message: err instanceof ApiFailure ? err.message : String(err) });
    }
  }

  return (
    <section aria-labelledby="upload-title">
      <h1 id="upload-title" tabIndex={-1}>Upload</h1>
      <div
        class={`drop ${over ? "over" : ""}`}
        onDragOver={(e) => (e.preventDefault(), setOver(true))}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          send([...(e.dataTransfer?.files ?? [])]);
        }}
      >
        <p>Drop images, documents and videos here, or</p>
        <label class="button">
          Choose files
          <input
            type="file"
            multiple
            class="visually-hidden"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              send([...(input.files ?? [])]);
              // Cleared, so choosing the same file again (to resume it) is a change too.
              input.value = "";
            }}
          />
        </label>
        <p class="hint">Large files go straight to storage and resume after a reload: choose the same file again.</p>
      </div>
      <form class="save-link" onSubmit={saveLink}>
        <label for="link-url">Save a web page</label>
        <div class="row">
          <input id="link-url" type="url" placeholder="https://…" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
          <button type="submit">Save link</button>
        </div>
      </form>
      <ul class="uploads" aria-live="polite">
        {items.map((item, i) => (
          <li key={i} class={item.state}>
            <span class="name">{item.id ? <a href={`#/files/${item.id}`}>{item.name}</a> : item.name}</span>
            <progress max={1} value={item.progress} aria-label={`${item.name} upload progress`} />
            <span class="message">{item.state === "working" ? `${item.phase} ${Math.round(item.progress * 100)} %` : item.message}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
