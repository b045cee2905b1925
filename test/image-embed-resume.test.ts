/**
 * The start-time resume of image embeddings (images/image-facts.ts `imagesToEmbed`): after a
 * model change it picks the live, rendered images whose vector is missing or of another model,
 * and leaves out those whose processing is queued or running, here or in another process sharing
 * the database (their pipeline stores the configured model's vector; an `image.embed` job for them
 * would embed the same image twice). The restart itself is tested over HTTP in images.test.ts.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../src/clock.ts";
import { openDatabase } from "../src/db/database.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { imagesToEmbed } from "../src/images/image-facts.ts";
import { defaultProjectOf, insertFileRow, insertTenantRows } from "./support/rows.ts";
import { tempDir } from "./support/temp-dir.ts";

const db = openDatabase(join(tempDir("mediabox-embed-resume-"), "m.db"));
const sql = new SqliteClient(db);
afterAll(() => db.close());

test("images whose processing is queued or running are not queued for re-embedding", async () => {
  const { orgId } = await insertTenantRows(sql, systemClock, { name: "embed-resume", tier: "PROFESSIONAL" });
  const projectId = await defaultProjectOf(sql, orgId);
  const image = async (name: string, state: { processing: string; model: string | null; variants?: string; deleted?: boolean; mediaType?: string }) => {
    const id = await insertFileRow(sql, { orgId, projectId, filename: name, mediaType: state.mediaType ?? "image", deleted: state.deleted ?? false });
    db.query("UPDATE files SET processing_status = ? WHERE id = ?").run(state.processing, id);
    db.query("INSERT INTO image_facts (file_id, variant_status, variant_count, embedding_model) VALUES (?, ?, 4, ?)").run(id, state.variants ?? "completed", state.model);
    return id;
  };
  const stale = await image("stale.jpg", { processing: "completed", model: "old-model" });
  const missing = await image("missing.jpg", { processing: "failed", model: null });
  await image("current.jpg", { processing: "completed", model: "new-model" });
  await image("queued-again.jpg", { processing: "queued", model: "old-model" });
  await image("being-processed.jpg", { processing: "processing", model: "old-model" });
  await image("not-rendered.jpg", { processing: "completed", model: null, variants: "failed" });
  await image("deleted.jpg", { processing: "completed", model: "old-model", deleted: true });
  await image("poster.mp4", { processing: "completed", model: "old-model", mediaType: "video" });

  expect((await imagesToEmbed(sql, "new-model")).map((f) => f.id).sort()).toEqual([stale, missing].sort());
});
