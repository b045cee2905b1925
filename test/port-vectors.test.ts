/**
 * The features' vector reads and writes through the one interface (vectors/vector-spaces.ts)
 * behave the same on SQLite (sqlite-vec and its in-memory scans) and on PostgreSQL (pgvector):
 * "similar images" ranks the same files in the same order with the same scores (a video by its
 * closest keyframe, at that frame's time; deleted files and other organizations' left out), a
 * document's chunks come back with their vectors, batch writes and removals land, and writes
 * inside a transaction that rolls back leave nothing (on SQLite not even in the in-memory scans,
 * loaded before or during the transaction), while those of one that commits are found at once.
 * The PostgreSQL half skips, saying why, where no server binary with pgvector is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import type { FileRow } from "../src/files/file.ts";
import { similarImages } from "../src/library/similar.ts";
import { documentChunks } from "../src/documents/document-views.ts";
import { SqliteVectorSpaces } from "../src/vectors/sqlite-vector-spaces.ts";
import { PgVectorIndex } from "../src/vectors/pgvector-index.ts";
import type { VectorSpaces } from "../src/vectors/vector-spaces.ts";
import { keyframeItemId } from "../src/video/keyframe-store.ts";
import { portEngines } from "./support/port-engines.ts";
import { findPostgres } from "./support/postgres.ts";

const { engines, sqlite } = portEngines("vectors");

/** Whether the PostgreSQL found has pgvector. */
const pgvector = (() => {
  const found = findPostgres();
  return !("missing" in found) && found.vector;
})();

const DIM = 16;
/** `a` along the first axis plus `b` along the second: the cosine with the first axis falls as b grows. */
const along = (a: number, b: number, c = 0) => Float32Array.from({ length: DIM }, (_, i) => (i === 0 ? a : i === 1 ? b : i === 2 ? c : 0));

async function tenant(db: SqlClient, orgId: string, projectId: string): Promise<void> {
  await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x') ON CONFLICT DO NOTHING", [orgId, orgId, orgId]);
  await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [projectId, orgId]);
}

async function file(db: SqlClient, row: { id: string; orgId: string; projectId: string; mediaType?: string; tags?: string[]; deleted?: boolean }): Promise<void> {
  await db.run(
    "INSERT INTO files (id, org_id, project_id, media_type, filename, tags, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, 'x', 'x', ?)",
    [row.id, row.orgId, row.projectId, row.mediaType ?? "image", `${row.id}.jpg`, JSON.stringify(row.tags ?? []), row.deleted ? "x" : null],
  );
}

const spacesOf = (name: string, db: SqlClient, clock: ManualClock): VectorSpaces => (name === "sqlite" ? new SqliteVectorSpaces(sqlite(), clock) : new PgVectorIndex(db, clock));

/** What each engine answered, compared once both have run. */
const rankings = new Map<string, { id: string; time: number | null; similarity: number; relevance: number }[]>();

describe.each(engines)("vectors on $name", ({ name, client }) => {
  const skip = name === "postgres" && !pgvector;

  test.skipIf(skip)("similar images: nearest live files of the organization, a video by its closest keyframe at its time, tags a small bonus", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 0, 1));
    const spaces = spacesOf(name, db, clock);
    const org = "org-similar";
    await tenant(db, org, "p-similar");
    await tenant(db, "org-else", "p-else");
    const model = "fixture-clip";
    const space = await spaces.open("image", model, DIM);
    const image = async (id: string, vector: Float32Array, extra: { tags?: string[]; deleted?: boolean; orgId?: string } = {}) => {
      const orgId = extra.orgId ?? org;
      await file(db, { id, orgId, projectId: orgId === org ? "p-similar" : "p-else", tags: extra.tags, deleted: extra.deleted });
      await db.run("INSERT INTO image_facts (file_id, embedding_model) VALUES (?, ?)", [id, model]);
      await space.upsert(id, orgId, vector);
    };
    await image("sim-ref", along(1, 0), { tags: ["Beach"] });
    await image("sim-a", along(1, 0.1));
    await image("sim-b", along(1, 0.5));
    await image("sim-c", along(1, 1), { tags: ["beach", "dog"] });
    // As close as can be, but deleted, or another organization's: never answered.
    await image("sim-deleted", along(1, 0), { deleted: true });
    await image("sim-other", along(1, 0), { orgId: "org-else" });
    // A video: its poster (under its id) is its far first frame; its second frame is closer than sim-b.
    await file(db, { id: "sim-video", orgId: org, projectId: "p-similar", mediaType: "video" });
    await db.run("INSERT INTO image_facts (file_id, embedding_model) VALUES (?, ?)", ["sim-video", model]);
    for (const [index, time] of [[0, 0.5], [1, 12.25]] as const) {
      await db.run("INSERT INTO video_keyframes (file_id, frame_index, time_seconds, blob_key, width, height, is_poster) VALUES (?, ?, ?, 'k', 64, 36, ?)", ["sim-video", index, time, index === 0 ? 1 : 0]);
    }
    await space.upsertMany(org, [[keyframeItemId("sim-video", 0), along(1, 2)], [keyframeItemId("sim-video", 1), along(1, 0.3)], ["sim-video", along(1, 2)]]);
    // Not embedded yet: refused.
    await file(db, { id: "sim-pending", orgId: org, projectId: "p-similar" });

    const reference = (await db.one<FileRow>("SELECT * FROM files WHERE id = 'sim-ref'"))!;
    const found = await similarImages({ sql: db, spaces }, reference, 10);
    const ranking = found.map((m) => ({ id: m.row.id, time: m.timeSeconds, similarity: m.vector_similarity, relevance: m.relevance_score }));
    expect(ranking.map((m) => [m.id, m.time])).toEqual([["sim-a", null], ["sim-video", 12.25], ["sim-b", null], ["sim-c", null]]);
    const cosine = (b: number) => 1 / Math.sqrt(1 + b * b);
    ranking.forEach((m, i) => expect(m.similarity).toBeCloseTo(cosine([0.1, 0.3, 0.5, 1][i]!), 3));
    // sim-c shares one of its two tags with the reference (case aside): 0.9 x cosine + 0.1 x 1/2.
    expect(ranking[3]!.relevance).toBeCloseTo(0.9 * cosine(1) + 0.1 * 0.5, 3);
    expect((await similarImages({ sql: db, spaces }, reference, 2)).map((m) => m.row.id)).toEqual(["sim-a", "sim-video"]);
    const pending = (await db.one<FileRow>("SELECT * FROM files WHERE id = 'sim-pending'"))!;
    await expect(similarImages({ sql: db, spaces }, pending, 10)).rejects.toThrow(/has no embedding yet/);
    rankings.set(name, ranking);
  });

  test.skipIf(skip)("a document's chunks with their vectors, of the model each was embedded with", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 1, 1));
    const spaces = spacesOf(name, db, clock);
    const org = "org-chunks";
    await tenant(db, org, "p-chunks");
    await file(db, { id: "doc-1", orgId: org, projectId: "p-chunks", mediaType: "document" });
    const chunk = (index: number, status: string, model: string | null) =>
      db.run(
        `INSERT INTO document_chunks (seq, id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status, embedding_model)
         VALUES (?, ?, 'doc-1', ?, ?, ?, '[1]', '[]', 3, 'text', ?, ?)`,
        [100 + index, `doc-1:${index}`, org, index, `chunk ${index}`, status, model],
      );
    await chunk(0, "completed", "text-a");
    await chunk(1, "completed", "text-b");
    await chunk(2, "pending", null);
    await (await spaces.open("text", "text-a", DIM)).upsertMany(org, [["doc-1:0", along(3, 4)]]);
    await (await spaces.open("text", "text-b", DIM)).upsert("doc-1:1", org, along(0, 0, 2));
    const row = (await db.one<FileRow>("SELECT * FROM files WHERE id = 'doc-1'"))!;
    const shown = await documentChunks({ sql: db, spaces }, row, true);
    expect(shown.chunks.map((c) => [c.chunk_id, "embedding_model" in c ? c.embedding_model : undefined])).toEqual([["doc-1:0", "text-a"], ["doc-1:1", "text-b"], ["doc-1:2", null]]);
    const embeddings = shown.chunks.map((c) => ("embedding" in c ? c.embedding : undefined));
    // Stored unit-length.
    expect(embeddings[0]!.slice(0, 3).map((v) => Math.round(v * 1e5) / 1e5)).toEqual([0.6, 0.8, 0]);
    expect(embeddings[1]!.slice(0, 3).map((v) => Math.round(v * 1e5) / 1e5)).toEqual([0, 0, 1]);
    expect(embeddings[2]).toBeNull();
    expect("status_counts" in shown && shown.status_counts).toEqual({ completed: 2, pending: 1, failed: 0 });
    expect((await documentChunks({ sql: db, spaces }, row, false)).chunks.every((c) => !("embedding" in c))).toBe(true);
  });

  test.skipIf(skip)("writes in a transaction: nothing of one rolled back, even in a scan loaded meanwhile; all of one committed, found at once; batches and removals", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 2, 1));
    const spaces = spacesOf(name, db, clock);
    const space = await spaces.open("image", "fixture-tx", DIM);
    await space.upsertMany("org-tx", [["tx-keep", along(1, 0)], ["tx-other", along(0, 1)]]);
    // The organization's scan is loaded (SQLite) before the transaction.
    expect((await space.nearest("org-tx", along(1, 0), 10)).map((n) => n.itemId)).toEqual(["tx-keep", "tx-other"]);

    await expect(
      db.transaction(async (tx) => {
        await space.upsertMany("org-tx", [["tx-new", along(1, 0.01)], ["tx-keep", along(0, 1)]], tx);
        await space.remove(["tx-other"], tx);
        await space.upsert("tx-late", "org-late", along(1, 0), tx);
        // A read of another organization meanwhile (on SQLite the connection the transaction holds, so it loads that organization's scan with the write in it).
        await space.nearest("org-late", along(1, 0), 10);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect([...(await space.vectorsOf(["tx-new", "tx-keep", "tx-other", "tx-late"])).keys()].sort()).toEqual(["tx-keep", "tx-other"]);
    const keep = (await space.nearest("org-tx", along(1, 0), 10)).map((n) => [n.itemId, Math.round(n.similarity * 1e4) / 1e4]);
    expect(keep).toEqual([["tx-keep", 1], ["tx-other", 0]]);
    expect(await space.nearest("org-late", along(1, 0), 10)).toEqual([]);

    await db.transaction(async (tx) => {
      await space.upsert("tx-new", "org-tx", along(1, 0.01), tx);
      await space.remove(["tx-other"], tx);
    });
    expect((await space.nearest("org-tx", along(1, 0), 10)).map((n) => n.itemId)).toEqual(["tx-keep", "tx-new"]);
    expect((await space.similarities("org-tx", along(1, 0), ["tx-new", "tx-other"])).size).toBe(1);

    // Outside a transaction: a batch replaces, removal of many and of none.
    await space.upsertMany("org-tx", [["tx-new", along(0, 1)], ["tx-3", along(1, 1)]]);
    expect((await space.nearest("org-tx", along(0, 1), 1))[0]!.itemId).toBe("tx-new");
    await space.remove(["tx-new", "tx-3", "tx-never"]);
    await space.remove([]);
    expect((await space.nearest("org-tx", along(1, 0), 10)).map((n) => n.itemId)).toEqual(["tx-keep"]);
    expect((await spaces.all("image")).map((s) => s.model).sort()).toEqual(["fixture-clip", "fixture-tx"]);
    await expect(spaces.open("image", "fixture-tx", DIM + 1)).rejects.toThrow(/holds 16-d vectors/);
  });
});

test.skipIf(engines.length < 2 || !pgvector)("similar images rank the same files in the same order with the same scores on sqlite-vec and pgvector", () => {
  const [sqliteRanking, pgRanking] = [rankings.get("sqlite")!, rankings.get("postgres")!];
  expect(pgRanking.map((m) => [m.id, m.time])).toEqual(sqliteRanking.map((m) => [m.id, m.time]));
  pgRanking.forEach((m, i) => {
    expect(Math.abs(m.similarity - sqliteRanking[i]!.similarity)).toBeLessThanOrEqual(1e-4);
    expect(Math.abs(m.relevance - sqliteRanking[i]!.relevance)).toBeLessThanOrEqual(1e-4);
  });
});
