/**
 * Rules over a library on SQLite, in process, through the appliance's group-commit client: N
 * settled documents (half of them invoices by their text), the library's fingerprint (auto
 * matching's staleness check), a dry run with a condition on the row (tags) and one on the text, then a rule (text contains "invoice" -> add a tag) applied to every
 * file one port transaction at a time, as an apply-to-library job does. Prints the medians of R
 * runs. What moving the rules' applications and file facts onto the port costs (docs/scale-out.md,
 * Rules).
 *
 *   bun scripts/bench/rules-apply.ts [checkout=.] [N=3000] [R=5]
 *
 * Give another checkout (an extracted `git archive` with node_modules linked) to measure it with
 * the same script; alternate the two, the machine is shared.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const N = Number(process.argv[3] ?? 3000);
const R = Number(process.argv[4] ?? 5);
const { openDatabase } = await import(`${root}/src/db/database.ts`);
const { GroupCommit } = await import(`${root}/src/db/group-commit.ts`);
const { SqliteClient } = await import(`${root}/src/db/sqlite-client.ts`);
const fileRepository = await import(`${root}/src/files/file-repository.ts`);
const { FileRepository } = fileRepository;
const { MediaKinds } = await import(`${root}/src/kinds/media-kind.ts`);
const { ManualClock } = await import(`${root}/src/clock.ts`);
const rules = await import(`${root}/src/rules/rules.ts`);
const autoMatch = await import(`${root}/src/rules/auto-match.ts`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const figures: Record<string, number[]> = { "fingerprint (ms)": [], "dry run, tags (ms)": [], "dry run, text (ms)": [], "apply, a file (us)": [] };

for (let run = 0; run < R; run++) {
  const dir = mkdtempSync(join(tmpdir(), "mediabox-bench-rules-"));
  const db = openDatabase(join(dir, "rules.db"));
  const sql = new SqliteClient(db, new GroupCommit(db));
  const clock = new ManualClock(Date.UTC(2032, 0, 1));
  const sources = { files: new FileRepository(sql, clock), kinds: new MediaKinds() };
  db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('org', 'org', 'org', 'STARTER', 'x')");
  db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES ('p', 'org', 'Default', 'default', 1, 'x', 'x')");
  const ids: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < N; i++) {
      const id = crypto.randomUUID();
      ids.push(id);
      db.query("INSERT INTO files (id, org_id, project_id, media_type, filename, tags, processing_status, created_at, updated_at) VALUES (?, 'org', 'p', 'document', 'f.txt', ?, 'completed', 'x', 'x')").run(
        id, JSON.stringify(i % 3 ? ["paper"] : ["paper", "kept"]),
      );
      db.query("INSERT INTO document_texts (file_id, text) VALUES (?, ?)").run(id, `${i % 2 ? "an invoice" : "a letter"} number ${i} `.repeat(40));
    }
  })();
  const newPort = !("extractedTextOnHandle" in fileRepository);
  const dry = (conditions: unknown[]) => (newPort ? rules.dryRun(sql, sources, "org", { conditions }, 50) : rules.dryRun(db, sources, "org", { conditions }, 50));
  let t = performance.now();
  const fingerprint = await autoMatch.libraryFingerprint(newPort ? sql : db, "org");
  figures["fingerprint (ms)"]!.push(performance.now() - t);
  if (!fingerprint.startsWith(`${N}:`)) throw new Error(`fingerprint ${fingerprint}`);
  t = performance.now();
  const byTags = await dry([{ field: "tags", op: "contains", value: "kept" }]);
  figures["dry run, tags (ms)"]!.push(performance.now() - t);
  t = performance.now();
  const byText = await dry([{ field: "text", op: "contains", value: "invoice" }]);
  figures["dry run, text (ms)"]!.push(performance.now() - t);
  if (byTags.matched_count !== Math.ceil(N / 3) || byText.matched_count !== Math.floor(N / 2)) throw new Error(`dry runs matched ${byTags.matched_count} and ${byText.matched_count}`);

  const rule = await rules.createRule({ sql, db, clock }, "org", null, { name: "invoices", conditions: [{ field: "text", op: "contains", value: "invoice" }], actions: [{ type: "add_tags", tags: ["invoice"] }] }, { webhookExists: async () => false });
  const effects = { runSchema: async () => {} };
  t = performance.now();
  for (const id of ids) await sql.transaction((tx: unknown) => rules.applyRulesTo(tx, db, clock, sources, id, [rule], { kind: "library", jobId: "job" }, effects));
  figures["apply, a file (us)"]!.push(((performance.now() - t) * 1000) / N);
  const applied = db.query("SELECT count(*) AS n FROM rule_applications WHERE job_id = 'job'").get() as { n: number };
  if (applied.n !== Math.floor(N / 2)) throw new Error(`${applied.n} applications`);
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`${root}: ${N} files, ${R} runs`);
for (const [name, xs] of Object.entries(figures)) console.log(`  ${name}: median ${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`);
