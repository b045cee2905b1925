/**
 * Near-duplicates review: each group of copies of one shot (GET /duplicates/groups) side by side
 * with what tells them apart (resolution, file size, sharpness, when taken and uploaded), the
 * best one ticked to keep. "Keep ticked, trash the rest" (POST /duplicates/groups/trash; Undo
 * restores them), "Not duplicates" (POST /duplicates/not-duplicates), or the best of every group
 * shown at once.
 */
import { useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import { BlurhashImage } from "./blurhash-image.tsx";
import { ShowMore, usePagedList } from "./paged-list.tsx";
import { formatBytes } from "../../byte-sizes.ts";

type Copy = {
  id: string;
  filename: string;
  width: number | null;
  height: number | null;
  size_bytes: number;
  sharpness: number;
  created_at: string;
  content_created_at: string | null;
  thumbnail_url: string | null;
  is_best: boolean;
};
type Group = { group_id: string; file_count: number; best_file_id: string; files: Copy[] };
type TrashOutcome = { groups: { trashed_file_ids: string[]; failed: { id: string; message: string }[] }[]; trashed_count: number };
/** `regroup`: the file sets just said to be "not duplicates", which Undo takes back. */
type Notice = { text: string; trashed?: string[]; regroup?: string[][]; error?: boolean };

const message = (err: unknown) => (err instanceof ApiFailure ? err.message : String(err));
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "unknown");
const files = (n: number) => `${n} file${n === 1 ? "" : "s"}`;

function trashedNotice(outcome: TrashOutcome): Notice {
  const trashed = outcome.groups.flatMap((g) => g.trashed_file_ids);
  const failed = outcome.groups.flatMap((g) => g.failed.map((f) => f.message));
  const text = `Moved ${files(trashed.length)} to the trash.${failed.length ? ` Not moved: ${failed.join("; ")}.` : ""}`;
  return { text, trashed, error: failed.length > 0 };
}

function GroupCard({ group, canEdit, onDone }: { group: Group; canEdit: boolean; onDone: (notice: Notice) => void }) {
  const [keep, setKeep] = useState<Set<string>>(new Set([group.best_file_id]));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const trash = group.files.filter((f) => !keep.has(f.id));
  const largest = Math.max(...group.files.map((f) => (f.width ?? 0) * (f.height ?? 0)));
  async function run(action: () => Promise<Notice>) {
    setBusy(true);
    setError(null);
    try {
      onDone(await action());
    } catch (err) {
      setError(message(err));
      setBusy(false);
    }
  }
  const title = `Group of ${group.file_count}: ${group.files[0]!.filename}`;
  return (
    <section class="dup-group" aria-label={title}>
      <ul class="dup-files">
        {group.files.map((f) => {
          const kept = keep.has(f.id);
          const pixels = (f.width ?? 0) * (f.height ?? 0);
          return (
            <li key={f.id} class={kept ? "kept" : "dropped"}>
              <a href={`#/files/${f.id}`} aria-label={`Open ${f.filename}`}>
                <BlurhashImage src={f.thumbnail_url} hash={null} alt="" label="IMG" />
              </a>
              <p class="name" title={f.filename}>
                {f.filename}
                {f.is_best ? (
                  <>
                    {" "}
                    <span class="badge best">Best</span>
                  </>
                ) : null}
              </p>
              <dl class="facts">
                <dt>Resolution</dt>
                <dd class={pixels === largest ? "top" : ""}>{f.width && f.height ? `${f.width} × ${f.height}` : "unknown"}</dd>
                <dt>Size</dt>
                <dd>{formatBytes(f.size_bytes)}</dd>
                <dt>Sharpness</dt>
                <dd>{Math.round(f.sharpness)}</dd>
                <dt>Taken</dt>
                <dd>{when(f.content_created_at)}</dd>
                <dt>Uploaded</dt>
                <dd>{when(f.created_at)}</dd>
              </dl>
              {canEdit ? (
                <label class="inline keep">
                  <input
                    type="checkbox"
                    checked={kept}
                    onChange={() => {
                      const next = new Set(keep);
                      if (next.has(f.id)) next.delete(f.id);
                      else next.add(f.id);
                      setKeep(next);
                    }}
                  />
                  Keep <span class="visually-hidden">{f.filename}</span>
                </label>
              ) : null}
              {canEdit && group.files.length > 2 ? (
                <button
                  type="button"
                  class="link not-copy"
                  disabled={busy}
                  aria-label={`Not a copy of the others: ${f.filename}`}
                  onClick={() =>
                    run(async () => {
                      // Each pair on its own: the others stay a group if they are copies of one another.
                      const pairs = group.files.filter((other) => other.id !== f.id).map((other) => [f.id, other.id]);
                      for (const pair of pairs) await api("/duplicates/not-duplicates", { method: "POST", body: { file_ids: pair } });
                      return { text: `${f.filename}: marked as not a copy of the others; it will not be grouped with them again.`, regroup: pairs };
                    })
                  }
                >
                  Not a copy of the others
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {canEdit ? (
        <div class="row wrap">
          <button
            type="button"
            class="danger"
            disabled={busy || !keep.size || !trash.length}
            onClick={() => run(async () => trashedNotice(await api<TrashOutcome>("/duplicates/groups/trash", { method: "POST", body: { keep_file_ids: [...keep] } })))}
          >
            {!keep.size ? "Tick one to keep" : `Keep ${keep.size}, move ${files(trash.length)} to the trash`}
          </button>
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() =>
              run(async () => {
                const ids = group.files.map((f) => f.id);
                await api("/duplicates/not-duplicates", { method: "POST", body: { file_ids: ids } });
                return { text: `${group.files.map((f) => f.filename).join(", ")}: marked as not duplicates; they will not be grouped again.`, regroup: [ids] };
              })
            }
          >
            Not duplicates
          </button>
        </div>
      ) : null}
    </section>
  );
}

export function Duplicates({ canEdit }: { canEdit: boolean }) {
  const list = usePagedList<Group>("/duplicates/groups", 20);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);

  async function done(next: Notice) {
    setNotice(next);
    await list.reload();
  }
  async function undo(ids: string[]) {
    const refused: string[] = [];
    for (const id of ids) await api(`/files/${id}/restore`, { method: "POST" }).catch((err) => refused.push(message(err)));
    await done({ text: refused.length ? `Restored ${files(ids.length - refused.length)}; not restored: ${refused.join("; ")}.` : `Restored ${files(ids.length)}.`, error: refused.length > 0 });
  }
  async function regroup(sets: string[][]) {
    try {
      for (const ids of sets) await api("/duplicates/not-duplicates/undo", { method: "POST", body: { file_ids: ids } });
      await done({ text: "Grouped again." });
    } catch (err) {
      await done({ text: message(err), error: true });
    }
  }
  async function keepAllBest() {
    setBusy(true);
    try {
      const keep = list.items.map((g) => g.best_file_id);
      await done(trashedNotice(await api<TrashOutcome>("/duplicates/groups/trash", { method: "POST", body: { keep_file_ids: keep } })));
    } catch (err) {
      setNotice({ text: message(err), error: true });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="duplicates-title" class="duplicates">
      <h1 id="duplicates-title" tabIndex={-1}>Near-duplicates</h1>
      <p class="hint">
        Copies of one shot: resized, re-encoded, cropped a little, exposed differently, or the next frame of a burst. The best of each group (the largest, then the
        sharpest) is ticked to keep; what goes to the trash can be restored for 30 days.
      </p>
      {notice ? (
        <p class={notice.error ? "failed" : "notice"} role="status">
          {notice.text}{" "}
          {notice.trashed?.length ? (
            <button type="button" class="link" onClick={() => undo(notice.trashed!)}>
              Undo
            </button>
          ) : null}
          {notice.regroup?.length ? (
            <button type="button" class="link" onClick={() => regroup(notice.regroup!)}>
              Undo
            </button>
          ) : null}
        </p>
      ) : null}
      {list.error ? <p class="error" role="alert">{list.error}</p> : null}
      <div class="row wrap">
        <p class="count" aria-live="polite">
          {!list.loaded ? "Loading…" : list.total ? `${list.total} group${list.total === 1 ? "" : "s"} of near-duplicates` : ""}
        </p>
        {canEdit && list.items.length > 1 ? (
          <button type="button" class="secondary" disabled={busy} onClick={keepAllBest}>
            Keep the best of these {list.items.length} groups, trash the rest
          </button>
        ) : null}
      </div>
      {list.loaded && !list.total && !list.error ? (
        <div class="empty-library">
          <h2>No near-duplicates</h2>
          <p>Photos are compared as they are analysed: copies of one shot appear here in groups, side by side, to keep the best.</p>
          <p>
            <a href="#/upload">Upload photos</a>, or see them all in <a href="#/photos">Photos</a>. (Byte-identical uploads never get this far: they are caught when
            uploaded.)
          </p>
        </div>
      ) : null}
      {list.items.map((g) => (
        <GroupCard key={g.group_id} group={g} canEdit={canEdit} onDone={done} />
      ))}
      <ShowMore list={list} label="Show more groups" secondary={false} />
    </section>
  );
}
