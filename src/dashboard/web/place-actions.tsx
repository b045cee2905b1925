/**
 * Projects and folders made and changed from the library's sidebar: a new project; for the
 * chosen project a new folder, rename, delete; for the chosen folder a new subfolder, rename,
 * move (to another place in any project) and delete. Each is one call of the projects or folders
 * API, and the server's refusal (a name taken, a folder not empty, the Default project) is shown
 * as it says it.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import type { Place } from "./places.tsx";

type Form = null | "project" | "folder" | "rename" | "move";
type Target = { id: string; label: string; projectId: string; folderId: string | null };

/** Every place a folder may move to: each project's root and its folders, indented by depth (first 100 of each level). */
async function destinations(): Promise<Target[]> {
  const projects = (await api("/projects?limit=100")).items as { id: string; name: string }[];
  const out: Target[] = [];
  const walk = async (projectId: string, parentId: string | null, depth: number): Promise<void> => {
    const query = parentId ? `parent_id=${parentId}` : `project_id=${projectId}`;
    for (const f of (await api(`/folders?${query}&limit=100`)).items as { id: string; name: string; folder_count: number }[]) {
      out.push({ id: f.id, label: `${"  ".repeat(depth)}${f.name}`, projectId, folderId: f.id });
      if (f.folder_count > 0 && depth < 6) await walk(projectId, f.id, depth + 1);
    }
  };
  for (const p of projects) {
    out.push({ id: `project:${p.id}`, label: `${p.name} (top level)`, projectId: p.id, folderId: null });
    await walk(p.id, null, 1);
  }
  return out;
}

export function PlaceActions({ place, onChanged }: { place: Place; onChanged: (next: Place | null, message: string) => void }) {
  const [form, setForm] = useState<Form>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [targets, setTargets] = useState<Target[] | null>(null);
  const [target, setTarget] = useState("");
  const field = useRef<HTMLInputElement | HTMLSelectElement>(null);
  useEffect(() => {
    setForm(null);
    setError(null);
  }, [place.projectId, place.folderId]);
  useEffect(() => field.current?.focus(), [form, targets]);

  const open = (next: Form) => {
    setError(null);
    setName(next === "rename" ? place.label : "");
    setForm(form === next ? null : next);
    if (next === "move") destinations().then((all) => {
      // A folder cannot go into itself or below it: those are left out (the server refuses them too).
      setTargets(all.filter((t) => t.folderId !== place.folderId));
      setTarget("");
    }, (err) => setError(errorText(err)));
  };
  async function run(action: () => Promise<{ next: Place | null; message: string }>) {
    setBusy(true);
    setError(null);
    try {
      const { next, message } = await action();
      setForm(null);
      onChanged(next, message);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  const submit = (event: Event) => {
    event.preventDefault();
    const clean = name.trim();
    if (form === "project") {
      run(async () => {
        const made = await api("/projects", { method: "POST", body: { name: clean } });
        return { next: { projectId: made.id, folderId: null, label: made.name, inProject: made.id }, message: `Project ${made.name} created` };
      });
    } else if (form === "folder") {
      run(async () => {
        const body = place.folderId ? { name: clean, parent_id: place.folderId } : { name: clean, project_id: place.projectId };
        const made = await api("/folders", { method: "POST", body });
        return { next: { projectId: null, folderId: made.id, label: made.name, inProject: made.project_id }, message: `Folder ${made.name} created in ${place.label}` };
      });
    } else if (form === "rename") {
      run(async () => {
        const path = place.folderId ? `/folders/${place.folderId}` : `/projects/${place.projectId}`;
        const renamed = await api(path, { method: "PATCH", body: { name: clean } });
        return { next: { ...place, label: renamed.name }, message: `${place.label} renamed to ${renamed.name}` };
      });
    } else if (form === "move") {
      const chosen = targets?.find((t) => t.id === target);
      if (!chosen) return;
      run(async () => {
        const body = chosen.folderId ? { parent_id: chosen.folderId } : { project_id: chosen.projectId, parent_id: null };
        await api(`/folders/${place.folderId}`, { method: "PATCH", body });
        return { next: { ...place, inProject: chosen.projectId }, message: `${place.label} moved to ${chosen.label.trim()}` };
      });
    }
  };
  const remove = () => {
    if (!confirm(`Delete ${place.label}? Only an empty ${place.folderId ? "folder" : "project"} can be deleted.`)) return;
    run(async () => {
      await api(place.folderId ? `/folders/${place.folderId}` : `/projects/${place.projectId}`, { method: "DELETE" });
      return { next: { projectId: null, folderId: null, label: "All files" }, message: `${place.label} deleted` };
    });
  };
  const chosen = place.projectId || place.folderId;
  const kind = place.folderId ? "folder" : "project";
  return (
    <div class="place-actions" role="group" aria-label="Manage projects and folders">
      <div class="row wrap">
        <button type="button" class="secondary" aria-expanded={form === "project"} onClick={() => open("project")}>New project</button>
        {chosen ? (
          <>
            <button type="button" class="secondary" aria-expanded={form === "folder"} onClick={() => open("folder")}>{place.folderId ? "New subfolder" : "New folder"}</button>
            <button type="button" class="secondary" aria-expanded={form === "rename"} onClick={() => open("rename")}>Rename {kind}</button>
            {place.folderId ? <button type="button" class="secondary" aria-expanded={form === "move"} onClick={() => open("move")}>Move folder</button> : null}
            <button type="button" class="secondary danger-text" disabled={busy} onClick={remove}>Delete {kind}</button>
          </>
        ) : null}
      </div>
      {form === "move" ? (
        <form class="place-form" onSubmit={submit}>
          <label>
            Move {place.label} into
            <select ref={field as any} required value={target} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)}>
              <option value="" disabled>{targets ? "Choose a place" : "Loading…"}</option>
              {(targets ?? []).map((t) => <option key={t.id} value={t.id}>{t.label}</option>)}
            </select>
          </label>
          <div class="row wrap">
            <button type="submit" disabled={busy || !target}>Move</button>
            <button type="button" class="link" onClick={() => setForm(null)}>Cancel</button>
          </div>
        </form>
      ) : form ? (
        <form class="place-form" onSubmit={submit}>
          <label>
            {form === "project" ? "New project's name" : form === "folder" ? `New folder's name (in ${place.label})` : `New name for ${place.label}`}
            <input ref={field as any} required maxLength={255} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <div class="row wrap">
            <button type="submit" disabled={busy || !name.trim()}>{form === "rename" ? "Rename" : "Create"}</button>
            <button type="button" class="link" onClick={() => setForm(null)}>Cancel</button>
          </div>
        </form>
      ) : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
    </div>
  );
}
