/**
 * Port transactions on SQLite with and without the group commit (docs/scale-out.md): the same
 * work, many small transactions running side by side as the pipelines' writes do, through a
 * SqliteClient whose transactions each hold the connection from BEGIN IMMEDIATE to COMMIT, and
 * through one whose transactions are savepoints of the turn's shared transaction. Each
 * transaction writes a file-like row (indexed for full-text search, whose segment flush is most of
 * a small commit's cost) and updates it, awaiting each statement. Runs alternate; prints each
 * way's transactions per second (median of the runs) and the ratio, grouped / alone.
 *
 *   bun scripts/bench/port-transactions.ts [transactions per run, default 3000] [runs each, default 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import { GroupCommit } from "../../src/db/group-commit.ts";
import { SqliteClient } from "../../src/db/sqlite-client.ts";

const perRun = Number(process.argv[2] ?? 3000);
const runs = Number(process.argv[3] ?? 5);
const concurrency = 16;
const dir = mkdtempSync(join(tmpdir(), "mediabox-port-tx-"));

function database(name: string) {
  const db = openDatabase(join(dir, `${name}.db`));
  db.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, status TEXT NOT NULL)");
  db.run("CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content='notes', content_rowid='id')");
  db.run("CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body); END");
  return db;
}

async function run(grouped: boolean, round: number): Promise<number> {
  const db = database(`${grouped ? "grouped" : "alone"}-${round}`);
  const writes = grouped ? new GroupCommit(db) : undefined;
  const client = new SqliteClient(db, writes);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < perRun) {
        const id = ++next;
        await client.transaction(async (tx) => {
          await tx.run("INSERT INTO notes (id, title, body, status) VALUES (?, ?, ?, 'queued')", [id, `note ${id}`, `the body of note ${id} with a few words to index`]);
          await tx.run("UPDATE notes SET status = 'stored' WHERE id = ?", [id]);
        });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const count = db.query<{ n: number }, []>("SELECT count(*) AS n FROM notes WHERE status = 'stored'").get()!.n;
  if (count !== perRun) throw new Error(`${count} of ${perRun} transactions committed`);
  db.close();
  return perRun / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const alone: number[] = [];
  const grouped: number[] = [];
  for (let round = 0; round < runs; round++) {
    alone.push(await run(false, round));
    grouped.push(await run(true, round));
  }
  const fmt = (xs: number[]) => `${median(xs).toFixed(0)}/s (runs ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;
  console.log(`${perRun} transactions a run, ${concurrency} at a time, ${runs} runs each, alternating`);
  console.log(`each transaction alone: ${fmt(alone)}`);
  console.log(`grouped:                ${fmt(grouped)}`);
  console.log(`port transactions: grouped ${(median(grouped) / median(alone)).toFixed(2)}x of alone`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
