/**
 * People: the persons faces were clustered into (GET /people), each with its face cut from a
 * photo; a person's page names them, hides or shows them, merges other people into them, lists
 * their faces for review (a face that is someone else is taken out: PATCH /faces/{id}) and their
 * photos. Extensions of the API, in docs/photos.md.
 */
import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import { BlurhashImage } from "./blurhash-image.tsx";
import { FaceCrop, type Box } from "./face-crop.tsx";
import { ShowMore, usePagedList } from "./paged-list.tsx";

type Person = {
  id: string;
  name: string | null;
  hidden: boolean;
  face_count: number;
  file_count: number;
  cover: { face_id: string; file_id: string; box: Box; thumbnail_url: string | null } | null;
};
type Face = { id: string; file_id: string; filename: string; person_id: string | null; box: Box; thumbnail_url: string | null };
type Photo = { id: string; filename: string; title: string | null; thumbnail_url?: string | null; blur_hash?: string | null };

const nameOf = (p: Person) => p.name ?? "Unnamed person";
const photos = (n: number) => `${n} photo${n === 1 ? "" : "s"}`;
const message = (err: unknown) => (err instanceof ApiFailure ? err.message : String(err));

function PersonCard({ person }: { person: Person }) {
  return (
    <a class="card person" href={`#/people/${person.id}`}>
      <FaceCrop src={person.cover?.thumbnail_url ?? null} box={person.cover?.box ?? { x_min: 0, y_min: 0, x_max: 1, y_max: 1 }} label={nameOf(person)} />
      <span class="name">{nameOf(person)}</span>
      <span class="hint">
        {photos(person.file_count)}
        {person.hidden ? " · hidden" : ""}
      </span>
    </a>
  );
}

/** Asks for the clustering job now and waits (up to a minute) for it to end. */
async function findPeopleNow(): Promise<void> {
  const { job_id } = await api<{ job_id: string }>("/people/recluster", { method: "POST" });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const job = await api<{ status: string; error?: string | null }>(`/job/${job_id}`);
    if (job.status === "completed") return;
    if (job.status === "failed" || job.status === "cancelled") throw new Error(job.error ?? `the clustering job ${job.status}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export function People({ canEdit }: { canEdit: boolean }) {
  const [showHidden, setShowHidden] = useState(false);
  const list = usePagedList<Person>(`/people?include_hidden=${showHidden}`, 60);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  async function find() {
    setBusy(true);
    setNotice(null);
    try {
      await findPeopleNow();
      await list.reload();
      setNotice("Faces without a person were grouped again.");
    } catch (err) {
      setNotice(message(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="people-title" class="people">
      <h1 id="people-title" tabIndex={-1}>People</h1>
      <p class="hint">Faces found in your photos, grouped by person. Name a person, merge two groups of the same person, or take out a face that is someone else.</p>
      <div class="row wrap">
        <label class="inline">
          <input type="checkbox" checked={showHidden} onChange={() => setShowHidden(!showHidden)} /> Show hidden people
        </label>
        {canEdit ? (
          <button type="button" class="secondary" disabled={busy} onClick={find}>
            {busy ? "Looking for people…" : "Look for new people now"}
          </button>
        ) : null}
      </div>
      {list.error ? <p class="error" role="alert">{list.error}</p> : null}
      {notice ? <p class="notice" role="status">{notice}</p> : null}
      <p class="count" aria-live="polite">{!list.loaded ? "Loading…" : list.total ? `${list.total} ${list.total === 1 ? "person" : "people"}` : ""}</p>
      {list.loaded && !list.total && !list.error ? (
        <div class="empty-library">
          <h2>{showHidden ? "Nobody here yet" : "No people yet"}</h2>
          <p>
            People appear as photos with faces are analysed: a face seen in two photos becomes a person, a few seconds after the second photo is analysed. A face seen
            only once waits for a second photo.
          </p>
          <ul>
            <li>
              <a href="#/upload">Upload photos</a> of people, or import a folder with <code>mediabox import</code>.
            </li>
            {canEdit ? <li>Photos already analysed: "Look for new people now" groups their faces at once.</li> : null}
          </ul>
        </div>
      ) : null}
      <ul class="grid people-grid">
        {list.items.map((p) => (
          <li key={p.id}>
            <PersonCard person={p} />
          </li>
        ))}
      </ul>
      <ShowMore list={list} label="Show more people" secondary={false} />
    </section>
  );
}

function Rename({ person, onChanged }: { person: Person; onChanged: (p: Person) => void }) {
  const [name, setName] = useState(person.name ?? "");
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setName(person.name ?? ""), [person.id, person.name]);
  return (
    <form
      class="row wrap person-name"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          onChanged(await api<Person>(`/people/${person.id}`, { method: "PATCH", body: { name: name.trim() || null } }));
          setError(null);
        } catch (err) {
          setError(message(err));
        }
      }}
    >
      <label>
        Name
        <input value={name} maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Who is this?" />
      </label>
      <button type="submit">Save name</button>
      {error ? <p class="error" role="alert">{error}</p> : null}
    </form>
  );
}

/** The other people, to tick those that are this person too. */
function Merge({ person, onMerged }: { person: Person; onMerged: (p: Person) => void }) {
  const [open, setOpen] = useState(false);
  const others = usePagedList<Person>(open ? "/people?include_hidden=true" : null, 60);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const candidates = others.items.filter((p) => p.id !== person.id);
  async function merge() {
    try {
      const merged = await api<Person>(`/people/${person.id}/merge`, { method: "POST", body: { person_ids: [...chosen] } });
      setChosen(new Set());
      setError(null);
      await others.reload();
      onMerged(merged);
    } catch (err) {
      setError(message(err));
    }
  }
  return (
    <details class="merge" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Merge other people into {nameOf(person)}</summary>
      <p class="hint">Tick the people who are {nameOf(person)} too: their faces become {nameOf(person)}'s.</p>
      {others.error ? <p class="error" role="alert">{others.error}</p> : null}
      {others.loaded && !candidates.length ? <p class="empty">There is nobody else to merge.</p> : null}
      <ul class="grid people-grid">
        {candidates.map((p) => (
          <li key={p.id} class={chosen.has(p.id) ? "selected" : ""}>
            <label class="card person pickable">
              <input
                type="checkbox"
                checked={chosen.has(p.id)}
                onChange={() => {
                  const next = new Set(chosen);
                  if (next.has(p.id)) next.delete(p.id);
                  else next.add(p.id);
                  setChosen(next);
                }}
              />
              <FaceCrop src={p.cover?.thumbnail_url ?? null} box={p.cover?.box ?? { x_min: 0, y_min: 0, x_max: 1, y_max: 1 }} label={nameOf(p)} />
              <span class="name">{nameOf(p)}</span>
              <span class="hint">{photos(p.file_count)}</span>
            </label>
          </li>
        ))}
      </ul>
      {candidates.length < others.total - 1 ? (
        <button type="button" class="secondary" onClick={others.more} disabled={others.loading}>
          Show more people
        </button>
      ) : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      <button type="button" disabled={!chosen.size} onClick={merge}>
        Merge {chosen.size || ""} into {nameOf(person)}
      </button>
    </details>
  );
}

export function PersonPage({ id, canEdit }: { id: string; canEdit: boolean }) {
  const [person, setPerson] = useState<Person | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const [notice, setNotice] = useState<{ text: string; undo?: () => Promise<void> } | null>(null);
  const faces = usePagedList<Face>(`/people/${id}/faces`, 48);
  /** Who else a face could be (named first, as GET /people lists them): the first hundred. */
  const others = usePagedList<Person>(canEdit ? "/people?include_hidden=true" : null, 100);
  const files = usePagedList<Photo>(`/people/${id}/files`, 48);

  const refresh = () =>
    api<Person>(`/people/${id}`).then(
      (p) => {
        setPerson(p);
        setMissing(null);
      },
      (err) => setMissing(err instanceof ApiFailure && err.status === 404 ? "This person is gone: merged into someone else, or every face was taken out." : message(err)),
    );
  useEffect(() => {
    setPerson(null);
    void refresh();
  }, [id]);

  /** Gives the face to `to` (another person) or to nobody ("not this person"), with Undo. */
  async function moveFace(face: Face, to: Person | null) {
    try {
      await api(`/faces/${face.id}`, { method: "PATCH", body: { person_id: to?.id ?? null } });
      faces.drop((f) => f.id !== face.id);
      setNotice({
        text: to ? `Moved the face in ${face.filename} to ${nameOf(to)}.` : `Took the face in ${face.filename} out of ${person ? nameOf(person) : "this person"}.`,
        undo: async () => {
          await api(`/faces/${face.id}`, { method: "PATCH", body: { person_id: id } });
          setNotice({ text: `The face in ${face.filename} is back.` });
          await Promise.all([refresh(), faces.reload(), files.reload()]);
        },
      });
      await Promise.all([refresh(), files.reload()]);
    } catch (err) {
      setNotice({ text: message(err) });
    }
  }

  if (missing) {
    return (
      <section aria-labelledby="person-title">
        <h1 id="person-title" tabIndex={-1}>Person not found</h1>
        <p>{missing}</p>
        <p>
          <a href="#/people">Back to People</a>
        </p>
      </section>
    );
  }
  if (!person) return <p aria-live="polite">Loading…</p>;
  return (
    <section aria-labelledby="person-title" class="person-page">
      <p class="crumbs">
        <a href="#/people">People</a>
      </p>
      <div class="person-head">
        <FaceCrop src={person.cover?.thumbnail_url ?? null} box={person.cover?.box ?? { x_min: 0, y_min: 0, x_max: 1, y_max: 1 }} label={nameOf(person)} />
        <div>
          <h1 id="person-title" tabIndex={-1}>{nameOf(person)}</h1>
          <p class="meta">
            {photos(person.file_count)}
            {person.hidden ? " · hidden from People" : ""}
          </p>
        </div>
      </div>
      {notice ? (
        <p class="notice" role="status">
          {notice.text}{" "}
          {notice.undo ? (
            <button type="button" class="link" onClick={() => notice.undo?.().catch((err) => setNotice({ text: message(err) }))}>
              Undo
            </button>
          ) : null}
        </p>
      ) : null}
      {canEdit ? (
        <div class="person-tools">
          <Rename person={person} onChanged={(p) => (setPerson(p), setNotice({ text: p.name ? `Named ${p.name}.` : "The name was cleared." }))} />
          <div class="row wrap">
            <button
              type="button"
              class="secondary"
              onClick={async () => {
                try {
                  const p = await api<Person>(`/people/${person.id}`, { method: "PATCH", body: { hidden: !person.hidden } });
                  setPerson(p);
                  setNotice({ text: p.hidden ? `${nameOf(p)} is hidden from People ("Show hidden people" lists them).` : `${nameOf(p)} is shown in People again.` });
                } catch (err) {
                  setNotice({ text: message(err) });
                }
              }}
            >
              {person.hidden ? "Show in People" : "Hide from People"}
            </button>
          </div>
          <Merge
            person={person}
            onMerged={(p) => {
              setPerson(p);
              setNotice({ text: `Merged: ${nameOf(p)} now has ${photos(p.file_count)}.` });
              void faces.reload();
              void files.reload();
            }}
          />
        </div>
      ) : null}
      <h2>Faces</h2>
      <p class="hint">{canEdit ? `A face that is not ${nameOf(person)}? Take it out with "Not ${nameOf(person)}", or move it to the person it is.` : `The faces grouped as ${nameOf(person)}.`}</p>
      {faces.error ? <p class="error" role="alert">{faces.error}</p> : null}
      <ul class="grid faces-grid">
        {faces.items.map((f) => (
          <li key={f.id}>
            <div class="card face">
              <a href={`#/files/${f.file_id}`} aria-label={`Open ${f.filename}`}>
                <FaceCrop src={f.thumbnail_url} box={f.box} label={f.filename} />
              </a>
              <span class="name" title={f.filename}>{f.filename}</span>
              {canEdit ? (
                <>
                  <button type="button" class="secondary" onClick={() => moveFace(f, null)} aria-label={`Not ${nameOf(person)}: ${f.filename}`}>
                    Not {nameOf(person)}
                  </button>
                  {others.items.length > 1 ? (
                    <select
                      aria-label={`Move the face in ${f.filename} to`}
                      value=""
                      onChange={(e) => {
                        const to = others.items.find((p) => p.id === (e.target as HTMLSelectElement).value);
                        if (to) void moveFace(f, to);
                      }}
                    >
                      <option value="">Move to…</option>
                      {others.items
                        .filter((p) => p.id !== person.id)
                        .map((p) => (
                          <option key={p.id} value={p.id}>
                            {nameOf(p)}
                          </option>
                        ))}
                    </select>
                  ) : null}
                </>
              ) : null}
            </div>
          </li>
        ))}
      </ul>
      <ShowMore list={faces} label="Show more faces" />
      <h2>Photos</h2>
      {files.error ? <p class="error" role="alert">{files.error}</p> : null}
      <ul class="photo-grid">
        {files.items.map((p) => (
          <li key={p.id}>
            <a href={`#/files/${p.id}`} aria-label={p.title ?? p.filename}>
              <BlurhashImage src={p.thumbnail_url ?? null} hash={p.blur_hash ?? null} alt="" label="IMG" />
            </a>
          </li>
        ))}
      </ul>
      <ShowMore list={files} label="Show more photos" />
    </section>
  );
}
