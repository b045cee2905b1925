/**
 * What `mediabox backup` and `restore` cover: a SQLite data directory (its database file, the
 * local store's blobs, the generated secrets). A deployment on PostgreSQL keeps its rows in a
 * database server and its blobs in an S3 bucket, which have their own tools; both commands refuse
 * there rather than copy a data directory that holds none of it (docs/scale-out.md, README's
 * Operations).
 */
import { ConfigError, type Config } from "../config.ts";

export function refuseOnPostgres(config: Pick<Config, "database">, command: "backup" | "restore"): void {
  if (config.database.kind !== "postgres") return;
  const rows = command === "backup"
    ? "back the database up with pg_dump (for example pg_dump --format=custom), which reads one consistent snapshot while the processes run"
    : "put a pg_dump archive back with pg_restore, with every mediabox process stopped";
  throw new ConfigError(
    `mediabox ${command} copies a SQLite data directory, and this deployment's database is PostgreSQL (--database / MEDIABOX_DATABASE): ` +
      `${rows}; the blobs are the S3 bucket's, kept by its own versioning (or replication); and keep MEDIABOX_CLOUD_TOKEN_KEY with your other settings, ` +
      "since it seals the stored secrets (docs/scale-out.md)",
  );
}
