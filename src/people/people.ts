/**
 * People in the database: the faces found in an image (their embeddings in the "face" vector
 * space), who each face is, and the people of an organization with their names, hidden flag and
 * merges. This module alone writes `faces` and `people`. Counts and listings see live files only.
 *
 * People and their review (listed, renamed, hidden, merged, a face given to another person) are
 * on the data-access port (SQLite or PostgreSQL; docs/scale-out.md), and so are finding faces,
 * clustering and the "same person" search, which write and read the face vectors through the
 * asynchronous VectorSpaces.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { SearchableSpace, VectorSpaces } from "../vectors/vector-spaces.ts";
import { CLUSTERING, clusterFaces, personFor, type ClusterFace } from "./clustering.ts";

/** The model name of the face space: Human's faceres descriptor. */
export const FACE_MODEL = "human-faceres";
export const FACE_DIMENSION = 1024;
/** Faces compared with a new face. */
const NEIGHBOURS = 16;

export interface FoundFace {
  box: { x_min: number; y_min: number; x_max: number; y_max: number };
  score: number;
  embedding: Float32Array;
}

/** What people read and write, on either database. */
export interface PeopleDeps {
  sql: SqlClient;
  clock: Clock;
  /** The vector spaces, the faces' among them (sqlite-vec or pgvector). */
  spaces: VectorSpaces;
}

/** Removes a file's faces and their vectors, in one transaction (before its faces are found again, or when it is purged). */
export async function removeFaces(deps: Pick<PeopleDeps, "sql" | "spaces">, fileId: string): Promise<void> {
  const spaces = await deps.spaces.all("face");
  await deps.sql.transaction(async (tx) => {
    const ids = (await tx.all<{ id: string }>("SELECT id FROM faces WHERE file_id = ?", [fileId])).map((f) => f.id);
    if (!ids.length) return;
    for (const space of spaces) await space.remove(ids, tx);
    await tx.run("DELETE FROM faces WHERE file_id = ?", [fileId]);
  });
}

/**
 * Stores the faces found in an image (replacing those of an earlier run). A face where the
 * earlier run found one (boxes overlapping by half) keeps that face's id and person, and a
 * reviewer's "not this person" stays; any other face gets the person of its nearest face from
 * another photo when similar enough. Returns how many joined a person.
 */
export async function storeFaces(deps: PeopleDeps, file: { id: string; org_id: string }, faces: FoundFace[]): Promise<number> {
  const { sql, clock } = deps;
  const earlier = await sql.all<EarlierFace>(
    "SELECT fa.id, fa.person_id, fa.reviewed, fa.x_min, fa.y_min, fa.x_max, fa.y_max FROM faces fa WHERE fa.file_id = ?",
    [file.id],
  );
  await removeFaces(deps, file.id);
  if (!faces.length) return 0;
  const space = await deps.spaces.open("face", FACE_MODEL, FACE_DIMENSION);
  const now = isoAt(clock.now());
  const kept = matchEarlierFaces(faces, earlier);
  const stored = faces.map((face, i) => ({ face, earlier: kept[i] ?? null, id: kept[i]?.id ?? crypto.randomUUID() }));
  // Assignment looks at the faces stored before this file's (its own are never the same person).
  const assigned = await Promise.all(
    stored.map(async ({ face, earlier: before }) =>
      before && (before.person_id !== null || before.reviewed) ? before.person_id : personFor(file.id, await neighbours(sql, space, file.org_id, face.embedding)),
    ),
  );
  // The faces' rows and vectors in one transaction (on SQLite the space writes through the connection it holds).
  await sql.transaction(async (tx) => {
    for (const [i, { id, face, earlier: before }] of stored.entries()) {
      const b = face.box;
      await tx.run(
        "INSERT INTO faces (id, file_id, org_id, person_id, reviewed, x_min, y_min, x_max, y_max, score, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [id, file.id, file.org_id, assigned[i]!, before?.reviewed ?? 0, b.x_min, b.y_min, b.x_max, b.y_max, Math.round(face.score * 1000) / 1000, now],
      );
      await space.upsert(id, file.org_id, face.embedding, tx);
    }
    await touchPeople(tx, now, assigned);
  });
  return assigned.filter(Boolean).length;
}

interface EarlierFace {
  id: string;
  person_id: string | null;
  reviewed: number;
  x_min: number;
  y_min: number;
  x_max: number;
  y_max: number;
}

/** Area of overlap over area of union of two boxes. */
function overlap(a: FoundFace["box"], b: FoundFace["box"]): number {
  const w = Math.min(a.x_max, b.x_max) - Math.max(a.x_min, b.x_min);
  const h = Math.min(a.y_max, b.y_max) - Math.max(a.y_min, b.y_min);
  if (w <= 0 || h <= 0) return 0;
  const area = (box: FoundFace["box"]) => (box.x_max - box.x_min) * (box.y_max - box.y_min);
  return (w * h) / (area(a) + area(b) - w * h);
}

/** For each face found now, the earlier face at the same place (one each, best overlaps first). */
export function matchEarlierFaces<T extends FoundFace["box"]>(faces: { box: FoundFace["box"] }[], earlier: T[]): (T | undefined)[] {
  const pairs = faces.flatMap((face, i) => earlier.map((before, j) => ({ i, j, iou: overlap(face.box, before) }))).filter((p) => p.iou >= 0.5);
  pairs.sort((a, b) => b.iou - a.iou);
  const matched: (T | undefined)[] = new Array(faces.length).fill(undefined);
  const taken = new Set<number>();
  for (const { i, j } of pairs) {
    if (matched[i] || taken.has(j)) continue;
    matched[i] = earlier[j];
    taken.add(j);
  }
  return matched;
}

async function neighbours(sql: SqlClient, space: SearchableSpace, orgId: string, vector: Float32Array) {
  const near = await space.nearest(orgId, vector, NEIGHBOURS);
  if (!near.length) return [];
  const rows = await sql.all<{ id: string; file_id: string; person_id: string | null }>(
    `SELECT fa.id, fa.file_id, fa.person_id FROM faces fa JOIN files f ON f.id = fa.file_id
      WHERE f.deleted_at IS NULL AND fa.id IN (${sql.dialect.jsonValues})`,
    [JSON.stringify(near.map((n) => n.itemId))],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return near.flatMap((n) => {
    const row = byId.get(n.itemId);
    return row ? [{ faceId: row.id, fileId: row.file_id, personId: row.person_id, similarity: n.similarity }] : [];
  });
}

/** Marks the people changed (a face joined or left them), in the caller's transaction. */
async function touchPeople(tx: SqlClient, now: string, personIds: (string | null)[]): Promise<void> {
  const touched = [...new Set(personIds.filter((p): p is string => p !== null))];
  if (touched.length) await tx.run(`UPDATE people SET updated_at = ? WHERE id IN (${tx.dialect.jsonValues})`, [now, JSON.stringify(touched)]);
}

/** Runs `fn` in one transaction: the clustering job's is fenced by its lease (JobContext.transaction). */
export type InTransaction = <T>(fn: (tx: SqlClient) => Promise<T>) => Promise<T>;

/**
 * The periodic clustering: the organization's faces without a person are clustered among
 * themselves (clustering.ts); each cluster becomes a new person. Faces already given a person are
 * never moved (nor one given a person meanwhile: the update checks), so names, merges and hidden
 * flags stay. Returns how many people were made.
 */
export async function clusterUnassigned(deps: PeopleDeps, orgId: string, inTransaction: InTransaction = (fn) => deps.sql.transaction(fn)): Promise<{ people: number; faces: number }> {
  const { sql, clock } = deps;
  const space = await deps.spaces.find("face", FACE_MODEL);
  if (!space) return { people: 0, faces: 0 };
  const rows = await sql.all<{ id: string; file_id: string }>(
    `SELECT fa.id, fa.file_id FROM faces fa JOIN files f ON f.id = fa.file_id WHERE fa.org_id = ? AND fa.person_id IS NULL AND f.deleted_at IS NULL`,
    [orgId],
  );
  const vectors = await space.vectorsOf(rows.map((r) => r.id));
  const faces: ClusterFace[] = rows.flatMap((r) => {
    const vector = vectors.get(r.id);
    return vector ? [{ id: r.id, fileId: r.file_id, vector }] : [];
  });
  const clusters = clusterFaces(faces, CLUSTERING);
  const now = isoAt(clock.now());
  await inTransaction(async (tx) => {
    for (const members of clusters) {
      const personId = crypto.randomUUID();
      await tx.run("INSERT INTO people (id, org_id, name, hidden, created_at, updated_at) VALUES (?, ?, NULL, 0, ?, ?)", [personId, orgId, now, now]);
      await tx.run(`UPDATE faces SET person_id = ? WHERE person_id IS NULL AND id IN (${tx.dialect.jsonValues})`, [personId, JSON.stringify(members)]);
    }
  });
  return { people: clusters.length, faces: clusters.reduce((n, c) => n + c.length, 0) };
}

export interface Person {
  id: string;
  name: string | null;
  hidden: boolean;
  faceCount: number;
  fileCount: number;
  /** The face shown for the person: the most confident of the largest faces. */
  cover: { faceId: string; fileId: string; box: FoundFace["box"] } | null;
  createdAt: string;
  updatedAt: string;
}

interface PersonRow {
  id: string;
  name: string | null;
  hidden: number;
  created_at: string;
  updated_at: string;
  face_count: number;
  file_count: number;
}

const PERSON_SELECT = `SELECT p.id, p.name, p.hidden, p.created_at, p.updated_at,
    count(fa.id) AS face_count, count(DISTINCT fa.file_id) AS file_count
  FROM people p JOIN faces fa ON fa.person_id = p.id JOIN files f ON f.id = fa.file_id AND f.deleted_at IS NULL`;

async function coverOf(sql: SqlClient, personId: string): Promise<Person["cover"]> {
  const row = await sql.one<{ id: string; file_id: string; x_min: number; y_min: number; x_max: number; y_max: number }>(
    `SELECT fa.id, fa.file_id, fa.x_min, fa.y_min, fa.x_max, fa.y_max FROM faces fa JOIN files f ON f.id = fa.file_id AND f.deleted_at IS NULL
      WHERE fa.person_id = ? ORDER BY (fa.x_max - fa.x_min) * (fa.y_max - fa.y_min) * fa.score DESC, fa.id LIMIT 1`,
    [personId],
  );
  return row ? { faceId: row.id, fileId: row.file_id, box: { x_min: row.x_min, y_min: row.y_min, x_max: row.x_max, y_max: row.y_max } } : null;
}

async function toPerson(sql: SqlClient, row: PersonRow): Promise<Person> {
  return {
    id: row.id,
    name: row.name,
    hidden: row.hidden === 1,
    faceCount: row.face_count,
    fileCount: row.file_count,
    cover: await coverOf(sql, row.id),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The organization's people with at least one face in a live file: named first (by name, any
 * case: `lower()` on both engines, where SQLite compared NOCASE), then by how many files show them.
 */
export async function listPeople(sql: SqlClient, orgId: string, options: { includeHidden: boolean; limit: number; offset: number }): Promise<{ people: Person[]; total: number }> {
  const where = `p.org_id = ?${options.includeHidden ? "" : " AND p.hidden = 0"}`;
  const total = (await sql.one<{ n: number }>(`SELECT count(*) AS n FROM (${PERSON_SELECT} WHERE ${where} GROUP BY p.id) AS listed`, [orgId]))!.n;
  const rows = await sql.all<PersonRow>(
    `${PERSON_SELECT} WHERE ${where} GROUP BY p.id ORDER BY p.name IS NULL, lower(p.name), file_count DESC, p.created_at, p.id LIMIT ? OFFSET ?`,
    [orgId, options.limit, options.offset],
  );
  return { people: await Promise.all(rows.map((row) => toPerson(sql, row))), total };
}

/** A person of the organization (404 PERSON_NOT_FOUND otherwise, and for one with no live face left). */
export async function getPerson(sql: SqlClient, orgId: string, personId: string): Promise<Person> {
  const row = await sql.one<PersonRow>(`${PERSON_SELECT} WHERE p.org_id = ? AND p.id = ? GROUP BY p.id`, [orgId, personId.toLowerCase()]);
  if (!row) throw new ApiError("PERSON_NOT_FOUND", `person ${personId} not found`);
  return toPerson(sql, row);
}

/** Newest taken first; files with no date taken last on both engines (PostgreSQL sorts NULL first in descending order). */
const NEWEST_TAKEN_FIRST = "f.content_created_at DESC NULLS LAST, f.created_at DESC";

/** Live files showing the person, newest taken first. */
export async function personFileIds(sql: SqlClient, orgId: string, personId: string, limit: number, offset: number): Promise<{ ids: string[]; total: number }> {
  await getPerson(sql, orgId, personId);
  const from = `FROM files f WHERE f.deleted_at IS NULL AND f.org_id = ? AND f.id IN (SELECT file_id FROM faces WHERE person_id = ?)`;
  const total = (await sql.one<{ n: number }>(`SELECT count(*) AS n ${from}`, [orgId, personId.toLowerCase()]))!.n;
  const ids = (await sql.all<{ id: string }>(`SELECT f.id ${from} ORDER BY ${NEWEST_TAKEN_FIRST}, f.id LIMIT ? OFFSET ?`, [orgId, personId.toLowerCase(), limit, offset])).map((r) => r.id);
  return { ids, total };
}

export async function updatePerson(
  deps: Pick<PeopleDeps, "sql" | "clock">, orgId: string, personId: string, changes: { name?: string | null; hidden?: boolean },
): Promise<Person> {
  const { sql, clock } = deps;
  const person = await getPerson(sql, orgId, personId);
  const name = changes.name === undefined ? person.name : changes.name?.trim() || null;
  const hidden = changes.hidden ?? person.hidden;
  await sql.run("UPDATE people SET name = ?, hidden = ?, updated_at = ? WHERE id = ?", [name, hidden ? 1 : 0, isoAt(clock.now()), person.id]);
  return getPerson(sql, orgId, person.id);
}

/** Moves every face of `sources` to `target` and removes the sources; the target keeps its name (or takes the first source's name when it has none). */
export async function mergePeople(deps: Pick<PeopleDeps, "sql" | "clock">, orgId: string, targetId: string, sourceIds: string[]): Promise<Person> {
  const { sql, clock } = deps;
  const target = await getPerson(sql, orgId, targetId);
  const sources = await Promise.all(sourceIds.map((id) => getPerson(sql, orgId, id)));
  if (sources.some((s) => s.id === target.id)) throw new ApiError("VALIDATION_ERROR", "person_ids: a person cannot be merged into itself");
  await sql.transaction(async (tx) => {
    for (const source of sources) {
      await tx.run("UPDATE faces SET person_id = ? WHERE person_id = ?", [target.id, source.id]);
      await tx.run("DELETE FROM people WHERE id = ?", [source.id]);
    }
    const name = target.name ?? sources.find((s) => s.name)?.name ?? null;
    await tx.run("UPDATE people SET name = ?, updated_at = ? WHERE id = ?", [name, isoAt(clock.now()), target.id]);
  });
  return getPerson(sql, orgId, target.id);
}

export interface FaceView {
  id: string;
  fileId: string;
  personId: string | null;
  personName: string | null;
  box: FoundFace["box"];
  score: number;
}

interface FaceViewRow {
  id: string;
  file_id: string;
  person_id: string | null;
  name: string | null;
  x_min: number;
  y_min: number;
  x_max: number;
  y_max: number;
  score: number;
}

/** A file's faces with their people's names, largest first (a face id narrows it to one). */
const FACES_OF_FILE = `SELECT fa.id, fa.file_id, fa.person_id, p.name, fa.x_min, fa.y_min, fa.x_max, fa.y_max, fa.score FROM faces fa LEFT JOIN people p ON p.id = fa.person_id
  WHERE fa.file_id = ?`;
const LARGEST_FIRST = "ORDER BY (fa.x_max - fa.x_min) * (fa.y_max - fa.y_min) DESC, fa.id";

const faceViewOf = (r: FaceViewRow): FaceView => ({
  id: r.id, fileId: r.file_id, personId: r.person_id, personName: r.name, box: { x_min: r.x_min, y_min: r.y_min, x_max: r.x_max, y_max: r.y_max }, score: r.score,
});

/** The faces found in a file, largest first: `GET /files/{id}/faces`, and the rules' file facts through their transaction. */
export async function facesOfFile(sql: SqlClient, fileId: string): Promise<FaceView[]> {
  return (await sql.all<FaceViewRow>(`${FACES_OF_FILE} ${LARGEST_FIRST}`, [fileId])).map(faceViewOf);
}

/**
 * "Same person" search: the faces most like this one in other live files of the organization,
 * whoever they were clustered into, most similar first, down to the same-person threshold.
 */
export async function similarFaces(deps: Pick<PeopleDeps, "sql" | "spaces">, orgId: string, faceId: string, limit: number): Promise<(FaceView & { similarity: number })[]> {
  const { sql } = deps;
  const face = await sql.one<{ id: string; file_id: string }>("SELECT id, file_id FROM faces WHERE id = ? AND org_id = ?", [faceId.toLowerCase(), orgId]);
  const space = await deps.spaces.find("face", FACE_MODEL);
  const vector = face && space ? (await space.vectorsOf([face.id])).get(face.id) : undefined;
  if (!face || !space || !vector) throw new ApiError("FACE_NOT_FOUND", `face ${faceId} not found`);
  const near = await space.nearest(orgId, vector, Math.min(4096, limit * 4 + 16));
  const found = near.filter((n) => n.itemId !== face.id && n.similarity >= CLUSTERING.samePerson);
  if (!found.length) return [];
  const rows = await sql.all<FaceViewRow>(
    `SELECT fa.id, fa.file_id, fa.person_id, p.name, fa.x_min, fa.y_min, fa.x_max, fa.y_max, fa.score FROM faces fa
       JOIN files f ON f.id = fa.file_id AND f.deleted_at IS NULL LEFT JOIN people p ON p.id = fa.person_id
      WHERE fa.file_id != ? AND fa.id IN (${sql.dialect.jsonValues})`,
    [face.file_id, JSON.stringify(found.map((n) => n.itemId))],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return found
    .flatMap((n) => {
      const r = byId.get(n.itemId);
      return r ? [{ ...faceViewOf(r), similarity: Math.round(n.similarity * 10_000) / 10_000 }] : [];
    })
    .slice(0, limit);
}

export interface PersonFace extends FaceView {
  filename: string;
}

/** A person's faces in live files, newest taken first: what a review of the person goes through. */
export async function personFaces(sql: SqlClient, orgId: string, personId: string, limit: number, offset: number): Promise<{ faces: PersonFace[]; total: number }> {
  const person = await getPerson(sql, orgId, personId);
  const from = `FROM faces fa JOIN files f ON f.id = fa.file_id AND f.deleted_at IS NULL LEFT JOIN people p ON p.id = fa.person_id WHERE fa.person_id = ?`;
  const total = (await sql.one<{ n: number }>(`SELECT count(*) AS n ${from}`, [person.id]))!.n;
  const rows = await sql.all<FaceViewRow & { filename: string }>(
    `SELECT fa.id, fa.file_id, f.filename, fa.person_id, p.name, fa.x_min, fa.y_min, fa.x_max, fa.y_max, fa.score ${from}
      ORDER BY ${NEWEST_TAKEN_FIRST}, fa.id LIMIT ? OFFSET ?`,
    [person.id, limit, offset],
  );
  return { faces: rows.map((r) => ({ ...faceViewOf(r), filename: r.filename })), total };
}

/**
 * Gives a face to another person of the organization, or to nobody ("not this person"). A face
 * taken from its person is left without one: the clustering job only makes new people of such
 * faces, so it never goes back to the person it was taken from, and the decision is marked
 * reviewed so that analysing the file again keeps it.
 */
export async function assignFace(deps: Pick<PeopleDeps, "sql" | "clock">, orgId: string, faceId: string, personId: string | null): Promise<FaceView> {
  const { sql, clock } = deps;
  const face = await sql.one<{ id: string; file_id: string; person_id: string | null }>(
    "SELECT fa.id, fa.file_id, fa.person_id FROM faces fa JOIN files f ON f.id = fa.file_id AND f.deleted_at IS NULL WHERE fa.id = ? AND fa.org_id = ?",
    [faceId.toLowerCase(), orgId],
  );
  if (!face) throw new ApiError("FACE_NOT_FOUND", `face ${faceId} not found`);
  const target = personId === null ? null : (await getPerson(sql, orgId, personId)).id;
  const now = isoAt(clock.now());
  await sql.transaction(async (tx) => {
    await tx.run("UPDATE faces SET person_id = ?, reviewed = 1 WHERE id = ?", [target, face.id]);
    await touchPeople(tx, now, [face.person_id, target]);
  });
  return faceViewOf((await sql.one<FaceViewRow>(`${FACES_OF_FILE} AND fa.id = ?`, [face.file_id, face.id]))!);
}
