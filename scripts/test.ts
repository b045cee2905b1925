/**
 * The whole test suite, as `npm test` runs it: the type check, then every test file three times:
 * with the test servers on SQLite (the appliance's default); on PostgreSQL + pgvector, one process
 * (a site's engine); and as a shared deployment, each test server an api process and a worker
 * process over PostgreSQL and one S3 bucket (docs/scale-out.md; test/support/suite-database.ts).
 * Every pass always runs; each writes its own JUnit report (test-results.xml,
 * test-results-postgres.xml, test-results-postgres-shared.xml), and the exit code fails when any did.
 *
 * With no PostgreSQL server with pgvector on this machine (.ci/run installs one), the full run skips
 * the two PostgreSQL passes, saying why; asked for alone (`bun scripts/test.ts postgres`), a pass
 * fails. `bun scripts/test.ts sqlite`, `... postgres` or `... postgres-shared` runs one pass;
 * further arguments go to `bun test` (file filters, `--bail`).
 */
import { findPostgres } from "../test/support/postgres.ts";

const ENGINES = ["sqlite", "postgres", "postgres-shared"] as const;
type Engine = (typeof ENGINES)[number];
const REPORTS: Record<Engine, string> = { sqlite: "test-results.xml", postgres: "test-results-postgres.xml", "postgres-shared": "test-results-postgres-shared.xml" };

function run(argv: string[], env: Record<string, string> = {}): number {
  const result = Bun.spawnSync(argv, { stdio: ["inherit", "inherit", "inherit"], env: { ...process.env, ...env } });
  return result.exitCode ?? 1;
}

const [first, ...rest] = Bun.argv.slice(2);
const only = ENGINES.find((engine) => engine === first);
const filters = only ? rest : Bun.argv.slice(2);
const engines: readonly Engine[] = only ? [only] : ENGINES;

if (!only && filters.length === 0 && run(["tsc", "--noEmit"]) !== 0) process.exit(1);

function postgresMissing(): string | null {
  const found = findPostgres();
  if ("missing" in found) return found.missing;
  return found.vector ? null : `the PostgreSQL in ${found.bin} has no pgvector`;
}

const failed: Engine[] = [];
for (const engine of engines) {
  const missing = engine !== "sqlite" && !only ? postgresMissing() : null;
  if (missing) {
    console.log(`\n== skipping the ${engine} pass: ${missing} ==`);
    continue;
  }
  console.log(`\n== test servers on ${engine} ==`);
  const code = run(["bun", "test", "--timeout", "90000", "--reporter=junit", `--reporter-outfile=${REPORTS[engine]}`, ...filters], {
    MEDIABOX_TEST_DATABASE: engine,
    ORT_DISABLE_TELEMETRY: "1",
  });
  if (code !== 0) failed.push(engine);
}
if (failed.length) console.log(`\nfailed on ${failed.join(" and ")}`);
process.exit(failed.length ? 1 : 0);
