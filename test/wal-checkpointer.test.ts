/**
 * The write-ahead log checkpointed from a worker thread: the event loop's connection stops
 * checkpointing on commit while the thread runs, the log is copied back and starts over, and
 * stopping hands checkpointing back to SQLite.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../src/db/database.ts";
import { WalCheckpointer } from "../src/db/wal-checkpointer.ts";
import { Logger } from "../src/log.ts";
import { tempDir } from "./support/server.ts";

const dir = tempDir("mediabox-wal-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a checkpoint on the thread copies the log back; the writer then starts it over; stop restores SQLite's own", async () => {
  const path = join(dir, "mediabox.db");
  const db = openDatabase(path);
  db.run("CREATE TABLE filler (id INTEGER PRIMARY KEY, v BLOB)");
  const checkpointer = new WalCheckpointer(db, path, new Logger("error"));
  checkpointer.start();
  expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(0);
  const insert = db.query("INSERT INTO filler (v) VALUES (?)");
  const burst = () => db.transaction(() => { for (let i = 0; i < 2_000; i++) insert.run(new Uint8Array(2_000)); })();
  burst(); // ~4 MB into the log, which SQLite alone would have checkpointed at 1,000 pages (~4 MB)
  const grown = statSync(`${path}-wal`).size;
  expect(grown).toBeGreaterThan(4_000_000);
  await checkpointer.checkpoint();
  expect(checkpointer.checkpoints).toBe(1);
  for (let i = 0; i < 3; i++) {
    burst();
    await checkpointer.checkpoint();
  }
  // Each burst started the log over from the beginning: it never holds more than about one burst.
  expect(statSync(`${path}-wal`).size).toBeLessThan(grown * 1.5);
  expect(checkpointer.checkpoints).toBe(4);
  await checkpointer.stop();
  expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(1000);
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM filler").get()!.n).toBe(8_000);
  db.close();
});

test("stop waits for the checkpoint in progress, and the database opens again at once", async () => {
  const path = join(dir, "stop.db");
  const db = openDatabase(path);
  db.run("CREATE TABLE filler (id INTEGER PRIMARY KEY, v BLOB)");
  const checkpointer = new WalCheckpointer(db, path, new Logger("error"));
  checkpointer.start();
  const insert = db.query("INSERT INTO filler (v) VALUES (?)");
  db.transaction(() => { for (let i = 0; i < 4_000; i++) insert.run(new Uint8Array(2_000)); })();
  void checkpointer.checkpoint();
  await checkpointer.stop();
  // The checkpoint ran to its end rather than being cut off with its thread.
  expect(checkpointer.checkpoints).toBe(1);
  db.close();
  const again = openDatabase(path);
  expect(again.query<{ n: number }, []>("SELECT count(*) AS n FROM filler").get()!.n).toBe(4_000);
  again.close();
});
