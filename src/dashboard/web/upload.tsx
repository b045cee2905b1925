/**
 * Upload: files dropped or chosen, each hashed and checked against the library first (a
 * duplicate is pointed at, not stored twice), then sent with its own progress bar: small files
 * by streaming upload, large ones through an upload intent straight to the blob store (resumable
 * after a reload by choosing the same file again).
 */
import { useState } from "preact/hooks";
import { api, errorText, postForm, subscribe, uploadFile } from "./api.ts";
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
      update(index, { state: "refused", message: errorText(err) });
    }
  }

  /**
   * Several small files go as one batch upload (an upload session): the body's progress for all,
   * then each file's result from the session's WebSocket channel (or at once for five or fewer).
   * Duplicates are skipped by the server (skip_duplicates) and pointed at.
   */
  async function sendBatch(files: File[], indexes: number[]) {
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    form.append("skip_duplicates", "true");
    for (const i of indexes) update(i, { phase: "uploading" });
    const settle = (fileIndex: number, result: any) => {
      const index = indexes[fileIndex]!;
      if (result.status === "failed") update(index, { state: "refused", progress: 1, message: result.error ?? "failed" });
      else if (result.skipped) update(index, { state: "duplicate", progress: 1, id: result.skipped_existing_image_id ?? undefined, message: "already in the library" });
      else update(index, { state: "stored", progress: 1, id: result.image_id, message: `${result.media_type}, ${result.status === "completed" ? "stored" : result.status}` });
    };
    try {
      const answer = await postForm("/files/upload/batch", form, (fraction) => {
        for (const i of indexes) update(i, { progress: fraction * 0.9 });
      });
      for (const r of answer.rejections ?? []) update(indexes[r.file_index]!, { state: "refused", progress: 1, message: r.reason });
      if (answer.immediate_results?.length) {
        const rejected = new Set((answer.rejections ?? []).map((r: any) => r.file_index));
        const accepted = indexes.map((_, i) => i).filter((i) => !rejected.has(i));
        answer.immediate_results.forEach((result: any, n: number) => settle(accepted[n]!, result));
        return;
      }
      if (!answer.accepted_files) return;
      await new Promise<void>((resolve) => {
        const socket = subscribe(answer.websocket_channel, (message) => {
          if (message.type === "file_completed" || message.type === "file_failed") settle(message.file_index, message.result);
          if (message.type === "session_completed") {
            socket.close();
            resolve();
          }
        });
        socket.onerror = () => resolve();
      });
    } catch (err) {
      for (const i of indexes) update(i, { state: "refused", message: errorText(err) });
    }
  }

  async function send(files: File[]) {
    const start = items.length;
    setItems((current) => [...current, ...files.map((f) => ({ name: f.name, progress: 0, phase: "waiting", state: "working" as const, message: "" }))]);
    const small = files.map((f, i) => ({ f, i })).filter(({ f }) => f.size <= LARGE_FILE_BYTES);
    const large = files.map((f, i) => ({ f, i })).filter(({ f }) => f.size > LARGE_FILE_BYTES);
    // Ten at a time: every tier takes batches of ten.
    const batches: { f: File; i: number }[][] = [];
    if (small.length > 1) for (let n = 0; n < small.length; n += 10) batches.push(small.slice(n, n + 10));
    const singles = small.length > 1 ? large : [...small, ...large];
    let next = 0;
    const worker = async () => {
      while (next < singles.length) {
        const { f, i } = singles[next++]!;
        await sendOne(f, start + i);
      }
    };
    await Promise.all([
      (async () => {
        for (const batch of batches) await sendBatch(batch.map((b) => b.f), batch.map((b) => start + b.i));
      })(),
      worker(),
      worker(),
    ]);
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
      update(index, { state: "refused", message: errorText(err) });
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
        <label class="button secondary">
          Choose a folder
          <input
            type="file"
            multiple
            class="visually-hidden"
            {...({ webkitdirectory: "" } as Record<string, string>)}
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              send([...(input.files ?? [])]);
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
