/**
 * Administrative commands run against the server's data and models directories: organizations,
 * API keys, backups and the models manifest. Each returns the text to print, so tests can call
 * them directly as well as through the binary.
 */
import { modelsReady } from "../native/packages.ts";
import type { Database } from "bun:sqlite";
import { BUILTIN_TEXT_MODEL } from "../embeddings/use-sif-embedder.ts";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import { siteLanguageFiles } from "../ocr/ocr.ts";
import { buildManifest, type ModelRole, writeManifest } from "../models/manifest.ts";
import { ModelVerifier } from "../models/model-verifier.ts";
import { describeTools } from "../video/ffmpeg-tools.ts";
import { VideoEngine } from "../video/video-engine.ts";
import { errorMessage } from "../errors.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys.ts";
import { parsePermissions } from "../auth/permissions.ts";
import { createOrganization, listOrganizations, setOrganizationTier } from "../tenancy/organizations.ts";
import { parseTier } from "../tenancy/tiers.ts";
import type { Accounts } from "../accounts/accounts.ts";
import { checkNewPassword, hashPassword } from "../accounts/passwords.ts";
import { parseRole } from "../auth/roles.ts";
import { createUser, listUsers, requireUserByEmail, setMembership, UserError } from "../accounts/users.ts";
import { listSupportMessages } from "../support/support.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { requireOrganization } from "../tenancy/organizations.ts";
import { ApiError } from "../errors.ts";
import { addWatchedFolder, allWatchedFolders, removeWatchedFolder, WatchSettingError } from "../watch/watched-folders.ts";
import { writeBackupArchive } from "../ops/backup-archive.ts";
import { refuseOnPostgres } from "../ops/backup-scope.ts";
import type { DataDir } from "../storage/data-dir.ts";
import { formatBytes } from "../byte-sizes.ts";

export class UsageError extends Error {}

export interface CommandOutput {
  /** Machine-readable result for stdout (the API key for `keys create`). */
  stdout: string;
  /** Human notes for stderr. */
  stderr?: string;
  /** Process exit status (default 0). */
  exitCode?: number;
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export async function orgsCommand(db: SqlClient, clock: Clock, args: string[], flags: { tier?: string | undefined }): Promise<CommandOutput> {
  const [action, ...rest] = args;
  switch (action) {
    case "create": {
      const org = await createOrganization(db, clock, required(rest[0], "organization NAME"), parseTier(flags.tier ?? "STARTER"));
      return { stdout: `${org.id}\t${org.name}\t${org.tier}`, stderr: `created organization "${org.name}" (${org.tier}) with its Default project` };
    }
    case "list":
      return { stdout: (await listOrganizations(db)).map((o) => `${o.id}\t${o.name}\t${o.tier}\t${o.created_at}`).join("\n") };
    case "set-tier": {
      const org = await setOrganizationTier(db, required(rest[0], "organization NAME"), parseTier(required(rest[1], "TIER")));
      return { stdout: `${org.id}\t${org.name}\t${org.tier}` };
    }
    default:
      throw new UsageError(`unknown orgs command "${action ?? ""}" (expected create, list or set-tier)`);
  }
}

export async function keysCommand(
  db: SqlClient,
  clock: Clock,
  args: string[],
  flags: { org?: string | undefined; permissions?: string | undefined; name?: string | undefined },
): Promise<CommandOutput> {
  const [action, ...rest] = args;
  switch (action) {
    case "create": {
      const { key, info } = await createApiKey(db, clock, required(flags.org, "--org NAME"), {
        name: flags.name ?? null,
        ...(flags.permissions ? { permissions: parsePermissions(flags.permissions) } : {}),
      });
      return {
        stdout: key,
        stderr: `created API key ${info.id} (${info.permissions.join(",")}); it is shown only once, store it now`,
      };
    }
    case "list": {
      const rows = (await listApiKeys(db, required(flags.org, "--org NAME"))).map((k) =>
        [k.id, k.display_prefix + "…", k.name ?? "-", k.permissions.join(","), k.created_at, k.last_used_at ?? "never", k.revoked_at ? `revoked ${k.revoked_at}` : "active"].join("\t"),
      );
      return { stdout: rows.join("\n") };
    }
    case "revoke": {
      const info = await revokeApiKey(db, clock, required(rest[0], "key ID"));
      return { stdout: `${info.id}\trevoked ${info.revoked_at}` };
    }
    default:
      throw new UsageError(`unknown keys command "${action ?? ""}" (expected create, list or revoke)`);
  }
}

/**
 * One archive of everything the appliance needs back, taken while the server runs (SQLite's
 * VACUUM INTO reads one snapshot, so concurrent writes neither block it nor tear it; see
 * ops/backup-archive.ts).
 */
export async function backupCommand(db: Database, dataDir: DataDir, config: Config, args: string[]): Promise<CommandOutput> {
  refuseOnPostgres(config, "backup");
  const target = resolve(required(args[0], "backup FILE"));
  if (existsSync(target)) throw new UsageError(`${target} already exists; choose a new file name`);
  const { manifest, bytes } = await writeBackupArchive(db, dataDir, config, target, new Date());
  const blobs = manifest.files.filter((f) => f.path.startsWith("blobs/")).length;
  const secrets = manifest.files.filter((f) => f.path.startsWith("secrets/")).length;
  const where = manifest.blob_store.kind === "local" ? `${blobs} blob(s)` : `no blobs (they stay in S3 bucket ${manifest.blob_store.bucket})`;
  return { stdout: target, stderr: `backup archive written (${formatBytes(bytes)}): database snapshot, ${where}, ${secrets} secret file(s), manifest with SHA-256 checksums` };
}

/**
 * `models manifest` hashes every folder of the models directory into manifest.json (run it where
 * the folders were downloaded, then carry both to the site); `models verify` checks the folders
 * against it and exits 1 when any would be refused.
 */
/** Folder name → role of every model folder the configuration names. */
function configuredModels(config: Config): Record<string, ModelRole> {
  // The built-in text model comes from npm, not from a folder (package-lock.json vouches for it).
  const roles: Record<string, ModelRole> = config.textEmbeddingModel === BUILTIN_TEXT_MODEL ? {} : { [config.textEmbeddingModel]: "text_embedding" };
  if (config.imageEmbeddingModel) roles[config.imageEmbeddingModel] = "image_embedding";
  if (config.captionModel) roles[config.captionModel] = "captioning";
  return roles;
}

/** Which ffmpeg and ffprobe videos are analysed with, their versions and guards; or why there are none. */
async function videoToolsLine(config: Config): Promise<string> {
  const engine = new VideoEngine(config);
  try {
    const { ffmpeg, ffprobe, limits } = await describeTools(await engine.get());
    const guards = [limits.memoryCap ? `memory cap ${Math.round(limits.memoryBytes / 1024 ** 2)} MB` : "no memory cap (prlimit missing)", limits.lowPriority ? "low priority" : "normal priority (nice missing)"];
    return `videos: ffmpeg ${ffmpeg.version} (${ffmpeg.path}), ffprobe ${ffprobe.version} (${ffprobe.path}); ${guards.join(", ")}`;
  } catch (err) {
    return `videos: not analysed here: ${errorMessage(err)}`;
  } finally {
    await engine.close();
  }
}

export async function modelsCommand(config: Config, args: string[]): Promise<CommandOutput> {
  const [action] = args;
  await modelsReady(config.modelsDir);
  switch (action) {
    case "manifest": {
      const manifest = await buildManifest(config.modelsDir, { roles: configuredModels(config) });
      if (!manifest.models.length) throw new UsageError(`no model folders in ${config.modelsDir}`);
      const file = writeManifest(config.modelsDir, manifest);
      const files = manifest.models.reduce((n, m) => n + m.files.length, 0);
      return { stdout: file, stderr: `recorded ${manifest.models.length} model folder(s), ${files} file(s): ${manifest.models.map((m) => `${m.name} (${m.role})`).join(", ")}` };
    }
    case "verify": {
      const verifier = new ModelVerifier(config.modelsDir, { requireManifest: config.modelsRequireManifest });
      const { manifest, reports } = await verifier.verifyAll();
      const refused = reports.filter((r) => r.problems.length);
      // What the configuration asks for but the directory lacks: the feature runs without it.
      const missing = Object.entries(configuredModels(config))
        .filter(([name]) => !reports.some((r) => r.name === name))
        .map(([name, role]) => `configured ${role} model "${name}" is not installed in ${config.modelsDir}` + (role === "text_embedding" ? ` (the built-in ${BUILTIN_TEXT_MODEL} serves; npm run models installs it)` : ""));
      for (const code of config.ocrLanguages.filter((c) => c !== "eng")) {
        const files = siteLanguageFiles(config.modelsDir, code);
        if (!files.some((file) => existsSync(file))) missing.push(`configured OCR language "${code}" is not installed: ${files[0]} (or .gz) is missing`);
      }
      return {
        stdout: reports.map((r) => [r.name, r.role ?? "-", r.status, r.problems.join("; ") || "-"].join("\t")).join("\n"),
        stderr: [...missing, `${manifest ?? "no manifest"}: ${reports.length} model folder(s), ${refused.length} refused`, await videoToolsLine(config)].join("\n"),
        exitCode: refused.length ? 1 : 0,
      };
    }
    default:
      throw new UsageError(`unknown models command "${action ?? ""}" (expected manifest or verify)`);
  }
}

/** Where links printed by the CLI point: the public URL, else this machine at the configured port. */
function cliOrigin(config: Config): string {
  return config.publicUrl ?? `http://localhost:${config.port || 8080}`;
}

/**
 * `users`: the administrator's side of accounts. The first user of an appliance is made here
 * (`users create ... --role owner`); the CLI acts with the database's authority, not a role's.
 */
export async function usersCommand(
  db: SqlClient,
  clock: Clock,
  config: Config,
  accounts: Accounts,
  args: string[],
  flags: { org?: string | undefined; role?: string | undefined; name?: string | undefined; password?: string | undefined },
): Promise<CommandOutput> {
  const [action, ...rest] = args;
  try {
    switch (action) {
      case "create": {
        const email = required(rest[0], "user EMAIL");
        const org = await requireOrganization(db, required(flags.org, "--org NAME"));
        const role = parseRole(flags.role ?? "member");
        if (flags.password !== undefined) checkNewPassword(flags.password, email);
        const passwordHash = flags.password !== undefined ? await hashPassword(flags.password) : null;
        // The admin vouches for the address, so it starts verified.
        const user = await db.transaction(async (tx) => {
          const created = await createUser(tx, clock, { email, name: flags.name ?? null, passwordHash, verified: true });
          await setMembership(tx, clock, org.id, created.id, role);
          return created;
        });
        if (passwordHash) return { stdout: `${user.id}\t${user.email}\t${org.name}\t${role}`, stderr: `created user ${user.email} (${role} of "${org.name}")` };
        const link = await accounts.requestPasswordReset(user.email, cliOrigin(config), true);
        return {
          stdout: `${user.id}\t${user.email}\t${org.name}\t${role}`,
          stderr: `created user ${user.email} (${role} of "${org.name}") without a password; they choose one with this link (valid 1 hour${accounts.mailer.configured ? ", also mailed" : ""}):\n${link}`,
        };
      }
      case "list": {
        const orgId = flags.org ? (await requireOrganization(db, flags.org)).id : undefined;
        const rows = (await listUsers(db, orgId)).map((u) =>
          [u.id, u.email, u.name ?? "-", u.email_verified_at ? "verified" : "unverified", u.memberships.map((m) => `${m.org_name}:${m.role}`).join(",") || "-", u.created_at].join("\t"),
        );
        return { stdout: rows.join("\n") };
      }
      case "set-role": {
        const user = await requireUserByEmail(db, required(rest[0], "user EMAIL"));
        const org = await requireOrganization(db, required(flags.org, "--org NAME"));
        const role = parseRole(required(flags.role, "--role ROLE"));
        await setMembership(db, clock, org.id, user.id, role);
        return { stdout: `${user.id}\t${user.email}\t${org.name}\t${role}` };
      }
      case "reset-password": {
        const user = await requireUserByEmail(db, required(rest[0], "user EMAIL"));
        const link = await accounts.requestPasswordReset(user.email, cliOrigin(config), true);
        return { stdout: link ?? "", stderr: `password reset link for ${user.email} (valid 1 hour${accounts.mailer.configured ? ", also mailed" : ""}); the current password works until it is used` };
      }
      case "invite": {
        const email = required(rest[0], "EMAIL");
        const org = await requireOrganization(db, required(flags.org, "--org NAME"));
        const role = parseRole(flags.role ?? "member");
        const { link, expiresAtMs } = await accounts.invite({ orgId: org.id, orgName: org.name, email, role, invitedBy: null }, cliOrigin(config), true);
        return { stdout: link, stderr: `invited ${email} to "${org.name}" as ${role} until ${new Date(expiresAtMs).toISOString()}${accounts.mailer.configured ? " (mailed)" : ""}` };
      }
      default:
        throw new UsageError(`unknown users command "${action ?? ""}" (expected create, list, set-role, reset-password or invite)`);
    }
  } catch (err) {
    // Domain refusals (a weak password, the last owner) are errors of the command, not crashes.
    if (err instanceof ApiError) throw new UserError(err.detail);
    throw err;
  }
}

export async function supportCommand(db: SqlClient, args: string[]): Promise<CommandOutput> {
  const [action] = args;
  if (action !== "list") throw new UsageError(`unknown support command "${action ?? ""}" (expected list)`);
  const rows = (await listSupportMessages(db)).map((m) =>
    [m.created_at, m.id, m.name ? `${m.name} <${m.email}>` : m.email, m.org_id ?? "-", m.mailed_at ? "mailed" : "stored", m.subject, JSON.stringify(m.message)].join("\t"),
  );
  return { stdout: rows.join("\n") };
}

/**
 * `watch DIR --org NAME [--project P] [--folder A/B]` adds a watched folder that a running server
 * (on the same data directory) starts taking files from at its next look; `watch` alone lists
 * them; `unwatch DIR` removes one added here (MEDIABOX_WATCH_DIR's are changed in the setting).
 */
export async function watchCommand(db: SqlClient, clock: Clock, command: "watch" | "unwatch", args: string[], flags: { org?: string | undefined; project?: string | undefined; folder?: string | undefined }): Promise<CommandOutput> {
  if (command === "unwatch") {
    const dir = required(args[0], "unwatch DIR");
    if (!(await removeWatchedFolder(db, dir))) throw new UsageError(`${resolve(dir)} is not a folder added with mediabox watch`);
    return { stdout: resolve(dir), stderr: "no longer watched" };
  }
  if (!args[0]) {
    return { stdout: (await allWatchedFolders(db)).map((w) => [w.path, w.org_id, w.project_id, w.folder_id ?? "-", w.origin, w.active ? "active" : "inactive", w.last_error ?? "-"].join("\t")).join("\n") };
  }
  const path = resolve(args[0]);
  if (!existsSync(path)) throw new UsageError(`${path} does not exist`);
  try {
    const row = await addWatchedFolder(db, clock, { path, org: required(flags.org, "--org NAME"), project: flags.project ?? null, folder: flags.folder ?? null }, "cli");
    return { stdout: row.path, stderr: `watching ${row.path}; files that appear there are stored, then moved to done/ or failed/ inside it` };
  } catch (err) {
    if (err instanceof WatchSettingError) throw new UsageError(err.message);
    throw err;
  }
}
