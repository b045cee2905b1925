/**
 * "Move": library files put into a folder or at a project's top level (POST /files/batch-move,
 * extension). The destinations are every project and its folder tree, listed once when the panel
 * opens; the outcome goes to `onDone` (the library's notice).
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Destination = { key: string; label: string; projectId: string; folderId: string | null };
type Folder = { id: string; name: string; folder_count: number };

/** A tree bigger than this is cut (the select would be unusable anyway). */
const MAX_DESTINATIONS = 500;

async function destinations(): Promise<Destination[]> {
  const out: Destination[] = [];
  const walk = async (projectId: string, parent: Folder | null, path: string) => {
    const query = parent ? `parent_id=${parent.id}` : `project_id=${projectId}`;
    const folders: Folder[] = (await api(`/folders?${query}&limit=100`)).items;
    for (const folder of folders) {
      if (out.length >= MAX_DESTINATIONS) return;
      const label = `${path} / ${folder.name}`;
      out.push({ key: folder.id, label, projectId, folderId: folder.id });
      if (folder.folder_count > 0) await walk(projectId, folder, label);
    }
  };
  const projects: { id: string; name: string }[] = (await api("/projects?limit=100")).items;
  for (const project of projects) {
    out.push({ key: `project:${project.id}`, label: `${project.name} (top level)`, projectId: project.id, folderId: null });
    await walk(project.id, null, project.name);
  }
  return out;
}

export function MoveFiles({ fileIds, onDone, onCancel }: { fileIds: string[]; onDone: (message: string) => void; onCancel: () => void }) {
  const [options, setOptions] = useState<Destination[] | null>(null);
  const [choice, setChoice] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const fail = (err: unknown) => setError(errorText(err));

  useEffect(() => {
    destinations().then((found) => {
      setOptions(found);
      if (found.length) setChoice(found[0]!.key);
    }, fail);
  }, []);

  async function move(e: Event) {
    e.preventDefault();
    const target = options?.find((o) => o.key === choice);
    if (!target) return;
    setBusy(true);
    try {
      const body = target.folderId ? { file_ids: fileIds, folder_id: target.folderId } : { file_ids: fileIds, project_id: target.projectId };
      const answer = await api<{ summary: { moved: number; failed: number } }>("/files/batch-move", { method: "POST", body });
      const { moved, failed } = answer.summary;
      onDone(`Moved ${moved} file(s) to ${target.label}${failed ? `; ${failed} could not be moved (no longer in the library)` : ""}`);
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="move-files" onSubmit={move} aria-label="Move files">
      {options === null ? (
        <p>Loading projects and folders…</p>
      ) : (
        <label>
          Move to
          <select value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
            {options.map((o) => (
              <option key={o.key} value={o.key}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
      )}
      {error ? <p class="error" role="alert">{error}</p> : null}
      <p class="actions">
        <button type="submit" disabled={busy || !choice}>
          Move {fileIds.length} file(s) here
        </button>{" "}
        <button type="button" class="link" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
