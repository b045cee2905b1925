/**
 * Bulk import of small notes, in process: N Markdown notes (~1 KB) through POST /files/upload, C at
 * a time, until every file's processing ended. Prints the wall time, the process's CPU time, the
 * port transactions (`AppContext.sql.transaction`) and the group commit's commits and tasks: what
 * moving writes from the turn's group commit to port transactions costs (docs/scale-out.md, Files).
 *
 *   bun scripts/bench/notes-import.ts [checkout=.] [N=400] [C=12]
 *
 * Give another checkout (an extracted `git archive` with node_modules linked) to measure it with
 * the same script; alternate the two, the machine is shared.
 */
import { resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const N = Number(process.argv[3] ?? 400);
const C = Number(process.argv[4] ?? 12);
const { startTestServer } = await import(`${root}/test/support/server.ts`);
const server = await startTestServer();
const owner = server.tenant({ tier: "ENTERPRISE" });
const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split(" ");
const note = (i: number) => `# Note ${i}\n\n${Array.from({ length: 150 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(" ")}\n\nnumber ${i}\n`;

let portTransactions = 0;
const sql = server.ctx.sql;
const transaction = sql.transaction.bind(sql);
sql.transaction = ((fn: never) => {
  portTransactions += 1;
  return transaction(fn);
}) as typeof sql.transaction;
const commits = server.ctx.writes.commits;
const tasks = server.ctx.writes.tasks;
const cpu = process.cpuUsage();
const started = performance.now();
let next = 0;
const failures: string[] = [];
await Promise.all(
  Array.from({ length: C }, async () => {
    while (next < N) {
      const i = next++;
      const form = new FormData();
      form.append("file", new File([note(i)], `note-${i}.md`, { type: "text/markdown" }));
      const res = await owner.api.form("/files/upload", form);
      if (res.status >= 300) failures.push(`${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  }),
);
const uploaded = performance.now();
const ended = () => (server.ctx.db.query("SELECT count(*) AS n FROM files WHERE processing_status IN ('completed','failed','stored')").get() as { n: number }).n;
const deadline = Date.now() + 10 * 60_000;
while (ended() < N - failures.length) {
  if (Date.now() > deadline) throw new Error("the notes' processing did not end within ten minutes");
  await Bun.sleep(20);
}
const done = performance.now();
const used = process.cpuUsage(cpu);
const notCompleted = (server.ctx.db.query("SELECT count(*) AS n FROM files WHERE processing_status <> 'completed'").get() as { n: number }).n;
console.log(JSON.stringify({
  root, notes: N, at_once: C,
  upload_s: +((uploaded - started) / 1000).toFixed(2), total_s: +((done - started) / 1000).toFixed(2), cpu_s: +((used.user + used.system) / 1e6).toFixed(2),
  port_transactions: portTransactions, group_commits: server.ctx.writes.commits - commits, group_tasks: server.ctx.writes.tasks - tasks,
  not_completed: notCompleted, failures: failures.slice(0, 3),
}));
await server.close();
