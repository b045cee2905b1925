import { openDatabase } from "../src/db/database.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { GroupCommit } from "../src/db/group-commit.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import { createUser, setMembership } from "../src/accounts/users.ts";
import { createSession, authenticateSession } from "../src/accounts/sessions.ts";
import { authenticateSession as oldAuthenticateSession } from "/tmp/mb-b2/src/accounts/sessions.ts";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
const db = openDatabase(join(mkdtempSync(join(tmpdir(), "micro-")), "m.db"));
const sql = new SqliteClient(db, new GroupCommit(db));
const clock = { now: () => Date.now() };
const org = await createOrganization(sql, clock, "Org", "CUSTOM");
const user = await createUser(sql, clock, { email: "a@example.com", verified: true });
await setMembership(sql, clock, org.id, user.id, "owner");
const L = { idleMs: 3_600_000, absoluteMs: 86_400_000 };
const { sessionId } = await createSession(sql, clock, L, { userId: user.id, orgId: org.id, ip: null, userAgent: null });
const N = 5_000;
const olds: number[] = [], news: number[] = [];
for (let round = 0; round < 60; round++) {
  const runOld = () => { const t = performance.now(); for (let i = 0; i < N; i++) oldAuthenticateSession(db as any, clock, L, sessionId); olds.push((performance.now() - t) * 1000 / N); };
  const runNew = async () => { const t = performance.now(); for (let i = 0; i < N; i++) await authenticateSession(sql, clock, L, sessionId); news.push((performance.now() - t) * 1000 / N); };
  if (round % 2) { runOld(); await runNew(); } else { await runNew(); runOld(); }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(2);
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * p)]!.toFixed(2);
console.log(`session: old sync median ${med(olds)} us, q10 ${q(olds, 0.1)}; new async median ${med(news)} us, q10 ${q(news, 0.1)}`);
process.exit(0);
