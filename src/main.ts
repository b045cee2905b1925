#!/usr/bin/env bun
/**
 * The `mediabox` command: `serve` (default) runs the appliance; `orgs`, `keys`, `backup` and
 * `models` administer the same data and models directories. Flags override MEDIABOX_* variables.
 */
import { parseArgs } from "node:util";
import { ApiKeyError } from "./auth/api-keys.ts";
import { backupCommand, keysCommand, modelsCommand, orgsCommand, supportCommand, UsageError, usersCommand, watchCommand, type CommandOutput } from "./cli/commands.ts";
import { Accounts } from "./accounts/accounts.ts";
import { SqliteClient } from "./db/sqlite-client.ts";
import { UserError } from "./accounts/users.ts";
import { Logger } from "./log.ts";
import { importCommand } from "./cli/import.ts";
import { ManifestError } from "./models/manifest.ts";
import { systemClock } from "./clock.ts";
import { CONFIG_FLAGS, ConfigError, describeSettings, loadConfig } from "./config.ts";
import { openDatabase } from "./db/database.ts";
import { DataDir } from "./storage/data-dir.ts";
import { VERSION } from "./http/docs.ts";
import { StartupError, startServer } from "./server.ts";
import { RestoreError, restoreDatabase } from "./ops/restore.ts";
import { isTarArchive, restoreBackupArchive } from "./ops/backup-archive.ts";
import { refuseOnPostgres } from "./ops/backup-scope.ts";
import { openPostgres } from "./db/postgres-database.ts";
import type { SqlClient } from "./db/sql-client.ts";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { OrganizationError } from "./tenancy/organizations.ts";
import { errorMessage } from "./errors.ts";

const USAGE = `Usage: mediabox [command] [flags]

Commands:
  serve [--role all|api|worker]           run the server (default); api serves requests only,
                                          worker runs jobs (and serves only /healthz, /readyz, /metrics)
  orgs create NAME [--tier TIER]          create an organization (tier default STARTER)
  orgs list                               list organizations
  orgs set-tier NAME TIER                 change an organization's tier
  keys create --org NAME [--permissions view,edit,delete] [--name LABEL]
                                          create an API key; prints it once on stdout
  keys list --org NAME                    list an organization's keys
  keys revoke ID                          revoke a key
  users create EMAIL --org NAME [--role R] [--name N] [--password-stdin]
                                          create a user (roles owner, admin, member, viewer; default member);
                                          without a password prints a link to choose one
  users list [--org NAME]                 list users and their memberships
  users set-role EMAIL --org NAME --role R
                                          give a user a role in an organization (adds them if needed)
  users reset-password EMAIL              print (and mail) a password reset link
  users invite EMAIL --org NAME [--role R]
                                          print (and mail) an invitation link
  support list                            messages sent to POST /support/contact, newest first
  backup FILE                             write one archive: database snapshot, local blobs, secrets, manifest (safe while serving)
  restore FILE                            put a backup archive (or an older database-only backup) back (the server must be stopped)
                                          (backup and restore: a SQLite data directory; on PostgreSQL use pg_dump and pg_restore)
  watch DIR --org NAME [--project P] [--folder A/B]
                                          ingest the files that appear in DIR (a running server takes them,
                                          then moves them to DIR/done or DIR/failed); watch alone lists
  unwatch DIR                             stop watching a directory added with watch
  import DIR [--server URL] [--key KEY] [--project P] [--folder F] [--tags a,b] [--recursive]
         [--skip-duplicates] [--concurrency N]
                                          upload a directory to a running server; re-running resumes
                                          (mediabox import --help for details)
  models manifest                         hash every folder of the models directory into its manifest.json
  models verify                           check the model folders against manifest.json (exit 1 if any is refused)
  version                                 print the version

The commands that administer rows (orgs, keys, users, support, watch) use the database serve uses:
the data directory's SQLite file, or the PostgreSQL database named by --database / MEDIABOX_DATABASE.

Tiers: FREE, STARTER, PROFESSIONAL, ENTERPRISE, CUSTOM (FREE cannot hold API keys)

Settings (flag / environment variable / default):
${describeSettings()
  .map((s) => `  --${s.flag.padEnd(28)} ${s.env.padEnd(38)} ${s.fallback ?? "(none)"}`)
  .join("\n")}
`;

async function main(argv: string[]): Promise<number | "serving"> {
  // Hidden: the document reader child process the server starts (src/documents/document-reader.ts).
  if (argv[0] === "__document-reader") {
    await (await import("./documents/reader-child.ts")).serveDocumentReader();
    return "serving";
  }
  // `import` talks to a running server over HTTP and has flags of its own (src/cli/import.ts).
  if (argv[0] === "import") return importCommand(argv.slice(1));
  const options = Object.fromEntries(CONFIG_FLAGS.map((flag) => [flag, { type: "string" as const }]));
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...options,
      tier: { type: "string" },
      org: { type: "string" },
      permissions: { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
      project: { type: "string" },
      folder: { type: "string" },
      "password-stdin": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const flags = values as { [flag: string]: string | undefined } & { help?: boolean; tier?: string; org?: string; permissions?: string; name?: string; role?: string; project?: string; folder?: string; "password-stdin"?: boolean };
  const [command = "serve", ...args] = positionals;
  if (flags.help || command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command === "version") {
    process.stdout.write(`mediabox ${VERSION}\n`);
    return 0;
  }
  if (command === "import") throw new UsageError("import comes first: mediabox import DIR [flags]");
  // --role is the process's role for serve (api, worker, all) and a person's role for users.
  const config = loadConfig(command === "serve" ? flags : ({ ...flags, role: undefined } as typeof flags));
  if (command === "serve") {
    const server = await startServer(config);
    let stopping = false;
    const shutdown = (signal: string) => {
      // A second signal while stopping: the operator does not want to wait.
      if (stopping) {
        server.ctx.log.warn("stopped at once by a second signal", { signal });
        process.exit(1);
      }
      stopping = true;
      const graceMs = config.shutdownGraceSeconds * 1000;
      server.ctx.log.info("shutting down", { signal, grace_seconds: config.shutdownGraceSeconds });
      // Whatever still runs past the grace period (a library that does not stop) does not keep the
      // process: jobs are durable (their leases are released at the next start) and SQLite's
      // write-ahead log keeps every committed write.
      setTimeout(() => {
        server.ctx.log.warn("the stop took longer than the grace period; exiting now", { grace_seconds: config.shutdownGraceSeconds });
        process.exit(1);
      }, graceMs);
      server.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          server.ctx.log.error("the stop failed", { err });
          process.exit(1);
        },
      );
    };
    process.on("SIGINT", () => shutdown("SIGINT"));
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    return "serving";
  }
  if (command === "models") return print(await modelsCommand(config, args));
  if (command === "backup" || command === "restore") refuseOnPostgres(config, command);
  if (command === "restore") {
    if (!args[0]) throw new UsageError("restore needs the backup FILE to restore");
    const dataDir = new DataDir(config.dataDir);
    if (!existsSync(args[0])) throw new RestoreError(`${resolve(args[0])} does not exist`);
    if (isTarArchive(args[0])) {
      const outcome = await restoreBackupArchive(dataDir, args[0], new Date());
      const blobs = outcome.blobStore.kind === "local"
        ? `${outcome.blobsAdded} blob(s) put back (${outcome.blobsPresent} already there)`
        : `blobs stay in S3 bucket ${outcome.blobStore.bucket}`;
      return print({
        stdout: outcome.restored,
        stderr: `restored: database (schema version ${outcome.schemaVersion}), ${blobs}, ${outcome.secrets} secret file(s)` +
          `${outcome.previous ? `; the one it replaced is kept as ${outcome.previous}` : ""}${outcome.previousSecrets ? `, the secrets as ${outcome.previousSecrets}` : ""}`,
      });
    }
    const outcome = await restoreDatabase(dataDir, args[0], new Date());
    return print({
      stdout: outcome.restored,
      stderr: `database restored (schema version ${outcome.schemaVersion})${outcome.previous ? `; the one it replaced is kept as ${outcome.previous}` : ""}; this was a database file alone (an older backup): restore blobs/objects/ and secrets/ from the same backup too`,
    });
  }
  if (command === "backup") {
    const db = openDatabase(new DataDir(config.dataDir).database);
    try {
      return print(await backupCommand(db, new DataDir(config.dataDir), config, args));
    } finally {
      db.close();
    }
  }
  const { sql, close } = await openCommandDatabase(config);
  try {
    let output: CommandOutput;
    if (command === "orgs") output = await orgsCommand(sql, systemClock, args, flags);
    else if (command === "keys") output = await keysCommand(sql, systemClock, args, flags);
    else if (command === "support") output = await supportCommand(sql, args);
    else if (command === "watch" || command === "unwatch") output = await watchCommand(sql, systemClock, command, args, flags);
    else if (command === "users") {
      const accounts = new Accounts(sql, systemClock, config, new Logger(config.logLevel));
      try {
        const password = flags["password-stdin"] ? (await Bun.stdin.text()).replace(/\r?\n$/, "") : undefined;
        output = await usersCommand(sql, systemClock, config, accounts, args, { ...flags, password });
      } finally {
        await accounts.close();
      }
    }
    else throw new UsageError(`unknown command "${command}"`);
    return print(output);
  } finally {
    await close();
  }
}

/** The administration commands' database: the data directory's SQLite file, or the PostgreSQL database the processes share (migrated first, as serve does). */
async function openCommandDatabase(config: ReturnType<typeof loadConfig>): Promise<{ sql: SqlClient; close(): Promise<void> }> {
  if (config.database.kind === "postgres") {
    const sql = await openPostgres(config.database.url, { max: 2 });
    return { sql, close: () => sql.close() };
  }
  const db = openDatabase(new DataDir(config.dataDir).database);
  return { sql: new SqliteClient(db), close: async () => db.close() };
}

function print(output: CommandOutput): number {
  if (output.stdout) process.stdout.write(output.stdout + "\n");
  if (output.stderr) process.stderr.write(output.stderr + "\n");
  return output.exitCode ?? 0;
}

try {
  const result = await main(process.argv.slice(2));
  if (result !== "serving") process.exit(result);
} catch (err) {
  const message = errorMessage(err);
  const expected = err instanceof UsageError || err instanceof ConfigError || err instanceof OrganizationError || err instanceof ApiKeyError || err instanceof UserError || err instanceof ManifestError || err instanceof StartupError || err instanceof RestoreError ||
    (err instanceof Error && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"));
  const usage = err instanceof UsageError || (err instanceof Error && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"));
  process.stderr.write(`mediabox: ${message}\n`);
  if (usage) process.stderr.write("run 'mediabox --help' for usage\n");
  if (!expected && err instanceof Error && err.stack) process.stderr.write(err.stack + "\n");
  process.exit(usage ? 2 : 1);
}
