/**
 * The whole test suite, as `npm test` runs it: the type check, then every test file once with the
 * test servers on SQLite (the appliance's default) and once on PostgreSQL + pgvector (a scaled-out
 * site's engine; test/support/suite-database.ts). Both passes always run; each writes its own JUnit
 * report (test-results.xml, test-results-postgres.xml), and the exit code fails when either did.
 *
 * With no PostgreSQL server with pgvector on this machine (.ci/run installs one), the full run skips
 * the PostgreSQL pass, saying why; asked for alone (`bun scripts/test.ts postgres`), it fails.
 * `bun scripts/test.ts sqlite` or `... postgres` runs one pass; further arguments go to `bun test`
 * (file filters, `--bail`).
 *
 * A third pass, asked for alone and not part of the full run: `bun scripts/test.ts postgres-shared`
 * serves each test server as an api process and a worker process over PostgreSQL and S3 (the
 * two-process deployment of docs/scale-out.md; test/support/suite-database.ts).
 */
import { findPostgres } from "../test/support/postgres.ts";

const ENGINES = ["sqlite", "postgres"] as const;
/** Passes that run only when asked for by name. */
const ON_REQUEST = ["postgres-shared"] as const;
type Engine = (typeof ENGINES)[number] | (typeof ON_REQUEST)[number];
const REPORTS: Record<Engine, string> = { sqlite: "test-results.xml", postgres: "test-results-postgres.xml", "postgres-shared": "test-results-postgres-shared.xml" };

function run(argv: string[], env: Record<string, string> = {}): number {
  const result = Bun.spawnSync(argv, { stdio: ["inherit", "inherit", "inherit"], env: { ...process.env, ...env } });
  return result.exitCode ?? 1;
}

const [first, ...rest] = Bun.argv.slice(2);
const only = [...ENGINES, ...ON_REQUEST].find((engine) => engine === first);
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
  const missing = engine === "postgres" && !only ? postgresMissing() : null;
  if (missing) {
    console.log(`\n== skipping the PostgreSQL pass: ${missing} ==`);
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
