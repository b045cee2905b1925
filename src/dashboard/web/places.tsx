/**
 * Projects and their folder trees, as a navigation list beside the library: choosing one
 * narrows the library to it. Folders load when their parent is opened.
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.ts";
import { PlaceActions } from "./place-actions.tsx";

/** `inProject`: the project holding the chosen project or folder (for making folders in it). */
export type Place = { projectId: string | null; folderId: string | null; label: string; inProject?: string };
type Folder = { id: string; name: string; folder_count: number; file_count?: number };

function FolderBranch({ folder, projectId, place, onChoose }: { folder: Folder; projectId: string; place: Place; onChoose: (p: Place) => void }) {
  const [open, setOpen] = useState(false);
  const [children, setChildren] = useState<Folder[] | null>(null);
  async function toggle() {
    if (!open && children === null) setChildren((await api(`/folders?parent_id=${folder.id}&limit=100`)).items);
    setOpen(!open);
  }
  return (
    <li>
      {folder.folder_count > 0 ? (
        <button type="button" class="twisty" aria-expanded={open} aria-label={`${open ? "Collapse" : "Expand"} ${folder.name}`} onClick={toggle}>
          {open ? "▾" : "▸"}
        </button>
      ) : (
        <span class="twisty" aria-hidden="true" />
      )}
      <button type="button" class="place" aria-current={place.folderId === folder.id ? "true" : undefined} onClick={() => onChoose({ projectId: null, folderId: folder.id, label: folder.name, inProject: projectId })}>
        {folder.name}
      </button>
      {open && children?.length ? (
        <ul>
          {children.map((child) => (
            <FolderBranch key={child.id} folder={child} projectId={projectId} place={place} onChoose={onChoose} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** `open`: shown unfolded (wide screens); on a phone the list folds under the place's name. */
export function Places({ place, open, onChoose, onMessage, canEdit }: { place: Place; open: boolean; onChoose: (p: Place) => void; onMessage: (message: string) => void; canEdit: boolean }) {
  const [projects, setProjects] = useState<{ id: string; name: string; file_count?: number }[]>([]);
  const [folders, setFolders] = useState<Record<string, Folder[]>>({});
  // Bumped by a change: the tree is read again (and its opened branches start closed).
  const [version, setVersion] = useState(0);
  useEffect(() => {
    api("/projects?limit=100").then(async (page) => {
      setProjects(page.items);
      const trees: Record<string, Folder[]> = {};
      for (const project of page.items) trees[project.id] = (await api(`/folders?project_id=${project.id}&limit=100`)).items;
      setFolders(trees);
    }, () => setProjects([]));
  }, [version]);
  return (
    <details class="places-panel" open={open}>
      <summary>
        Projects and folders<span class="hint">: {place.label}</span>
      </summary>
    <nav class="places" aria-label="Projects and folders">
      <ul key={version}>
        <li>
          <button type="button" class="place" aria-current={!place.projectId && !place.folderId ? "true" : undefined} onClick={() => onChoose({ projectId: null, folderId: null, label: "All files" })}>
            All files
          </button>
        </li>
        {projects.map((project) => (
          <li key={project.id}>
            <button type="button" class="place project" aria-current={place.projectId === project.id ? "true" : undefined} onClick={() => onChoose({ projectId: project.id, folderId: null, label: project.name, inProject: project.id })}>
              {project.name}
            </button>
            {folders[project.id]?.length ? (
              <ul>
                {folders[project.id]!.map((folder) => (
                  <FolderBranch key={folder.id} folder={folder} projectId={project.id} place={place} onChoose={onChoose} />
                ))}
              </ul>
            ) : null}
          </li>
        ))}
      </ul>
    </nav>
    {canEdit ? (
      <PlaceActions
        place={place}
        onChanged={(next, message) => {
          setVersion((v) => v + 1);
          if (next) onChoose(next);
          onMessage(message);
        }}
      />
    ) : null}
    </details>
  );
}
