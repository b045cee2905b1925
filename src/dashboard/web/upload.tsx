/** Upload: files dropped or chosen, each sent with its own progress bar and the server's answer. */
import { useState } from "preact/hooks";
import { ApiFailure, uploadFile } from "./api.ts";

type Item = { name: string; progress: number; state: "uploading" | "stored" | "duplicate" | "refused"; message: string; id?: string };

export function Upload() {
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);

  function update(index: number, change: Partial<Item>) {
    setItems((current) => current.map((item, i) => (i === index ? { ...item, ...change } : item)));
  }

  async function send(files: File[]) {
    const start = items.length;
    setItems((current) => [...current, ...files.map((f) => ({ name: f.name, progress: 0, state: "uploading" as const, message: "" }))]);
    // Three at a time: enough to fill the line, few enough to stay inside the tier's concurrency.
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const index = next++;
        const file = files[index]!;
        try {
          const answer = await uploadFile(file, (fraction) => update(start + index, { progress: fraction }));
          const duplicate = Boolean(answer.skipped);
          update(start + index, {
            progress: 1,
            state: duplicate ? "duplicate" : "stored",
            id: duplicate ? answer.skipped_existing_image_id : answer.image_id,
            message: duplicate ? "already in the library" : `${answer.media_type}, ${answer.status}`,
          });
        } catch (err) {
          update(start + index, { state: "refused", message: err instanceof ApiFailure ? err.message : String(err) });
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
  }

  return (
    <section aria-labelledby="upload-title">
      <h1 id="upload-title">Upload</h1>
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
          <input type="file" multiple class="visually-hidden" onChange={(e) => send([...((e.target as HTMLInputElement).files ?? [])])} />
        </label>
      </div>
      <ul class="uploads" aria-live="polite">
        {items.map((item, i) => (
          <li key={i} class={item.state}>
            <span class="name">{item.id ? <a href={`#/files/${item.id}`}>{item.name}</a> : item.name}</span>
            <progress max={1} value={item.progress} aria-label={`${item.name} upload progress`} />
            <span class="message">{item.state === "uploading" ? `${Math.round(item.progress * 100)} %` : item.message}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
