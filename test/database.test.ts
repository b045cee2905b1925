/**
 * The server's database connection keeps the compiled statements of all the SQL it runs (Bun
 * keeps only the last 20 by default, and the server runs hundreds).
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../src/db/database.ts";
import { tempDir } from "./support/server.ts";

const dir = tempDir("mediabox-database-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a statement stays compiled while hundreds of others run", () => {
  const db = openDatabase(join(dir, "mediabox.db"));
  const sql = "SELECT id FROM files WHERE id = ?";
  const first = db.query(sql);
  for (let i = 0; i < 300; i++) db.query(`SELECT ${i} AS n FROM files WHERE id = ?`).get("x");
  expect(db.query(sql)).toBe(first);
  db.close();
});
