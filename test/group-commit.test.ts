/**
 * Writes of tasks side by side committed in one transaction (db/group-commit.ts): queued in the
 * same turn they commit together, each resolves once committed, one that throws rolls back only
 * its own writes, and a flush leaves what it had no time for to the next turn.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { openDatabase } from "../src/db/database.ts";
import { GroupCommit } from "../src/db/group-commit.ts";
import { tempDir } from "./support/server.ts";

const dir = tempDir("mediabox-group-commit-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function setup(name: string, now?: () => number) {
  const path = join(dir, `${name}.db`);
  const db = openDatabase(path);
  db.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
  // Another connection sees only what was committed.
  const reader = new Database(path, { readonly: true });
  const committed = () => reader.query<{ id: number }, []>("SELECT id FROM notes ORDER BY id").all().map((r) => r.id);
  return { db, writes: new GroupCommit(db, now), committed };
}

test("writes queued in the same turn commit in one transaction; each resolves with its result once committed", async () => {
  const { db, writes, committed } = setup("together");
  const insert = (id: number) => () => db.query("INSERT INTO notes (id, text) VALUES (?, ?)").run(id, `note ${id}`).changes;
  const all = Promise.all([1, 2, 3].map((id) => writes.write(insert(id)).then((changes) => ({ changes, seen: committed() }))));
  expect(committed()).toEqual([]); // nothing runs before the next turn
  const results = await all;
  for (const r of results) expect(r).toEqual({ changes: 1, seen: [1, 2, 3] });
  expect([writes.commits, writes.tasks]).toEqual([1, 3]);
  await writes.write(insert(4));
  expect([writes.commits, writes.tasks, committed()]).toEqual([2, 4, [1, 2, 3, 4]]);
});

test("a write that throws rolls back its own writes only, and only its caller sees the error", async () => {
  const { db, writes, committed } = setup("failure");
  const ok = writes.write(() => db.query("INSERT INTO notes (id, text) VALUES (1, 'kept')").run());
  const failing = writes.write(() => {
    db.query("INSERT INTO notes (id, text) VALUES (2, 'rolled back')").run();
    db.query("INSERT INTO notes (id, text) VALUES (3, NULL)").run(); // NOT NULL
  });
  const after = writes.write(() => db.query("INSERT INTO notes (id, text) VALUES (4, 'kept too')").run());
  await expect(failing).rejects.toThrow(/NOT NULL/);
  await Promise.all([ok, after]);
  expect(committed()).toEqual([1, 4]);
  expect(writes.commits).toBe(1);
});

test("a flush takes what fits in its time slice and leaves the rest to the next turn", async () => {
  // A clock the tasks move: each write is 10 ms of work, however busy the machine is.
  let clock = 0;
  const { db, writes, committed } = setup("slices", () => clock);
  const slow = (id: number) => () => {
    clock += 10;
    db.query("INSERT INTO notes (id, text) VALUES (?, 'slow')").run(id);
  };
  await Promise.all([1, 2, 3, 4].map((id) => writes.write(slow(id))));
  expect(committed()).toEqual([1, 2, 3, 4]);
  expect(writes.commits).toBe(2); // two of 10 ms pass the 15 ms slice: 2 + 2
});

test("asynchronous tasks (port transactions) join the shared transaction: one commit, each rolled back alone", async () => {
  const { db, writes, committed } = setup("async-tasks");
  const insert = (id: number) => db.query("INSERT INTO notes (id, text) VALUES (?, 'async')").run(id);
  const task = (ids: number[], fail = false) =>
    writes.transaction(async () => {
      for (const id of ids) {
        insert(id);
        await Promise.resolve(); // a port statement's await
      }
      if (fail) throw new Error("rolled back");
      return ids.length;
    });
  const results = Promise.allSettled([task([1, 2]), task([3, 4], true), writes.write(() => insert(5)), task([6])]);
  expect(committed()).toEqual([]);
  expect((await results).map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([2, "rolled back", expect.anything(), 1]);
  expect(committed()).toEqual([1, 2, 5, 6]);
  expect([writes.commits, writes.tasks]).toEqual([1, 4]);
});

test("writes queued while an asynchronous task waits commit after it, in the next flush, and survive its rollback", async () => {
  const { db, writes, committed } = setup("waiting-task");
  const insert = (id: number) => () => db.query("INSERT INTO notes (id, text) VALUES (?, 'shared')").run(id);
  let queued: Promise<unknown> | null = null;
  const held = writes.transaction(async () => {
    db.query("INSERT INTO notes (id, text) VALUES (1, 'held')").run();
    queued = writes.write(insert(2));
    await Bun.sleep(20); // real waiting: another flush would run here if it could
    expect(committed()).toEqual([]);
    throw new Error("rolled back");
  });
  await expect(held).rejects.toThrow("rolled back");
  await queued;
  expect(committed()).toEqual([2]);
  expect(writes.commits).toBe(2); // the failed task's flush, then the one that took the queued write
});
