/**
 * An organization's rules and the record of their applications: the only writer of `rules` and
 * `rule_applications`. A rule is a name, conditions over what analysis found (conditions.ts),
 * `match` (all or any of them) and actions (actions.ts). Rules run in `position` order, each
 * seeing what the rules before it changed. `applyRulesTo` is the one way a rule reaches a file,
 * whether its analysis just ended or an apply-to-library job walks the library.
 *
 * On the data-access port (docs/scale-out.md): the rules, their applications (applied and
 * recorded in the caller's transaction), the matchers and dry runs, with every fact they read.
 */
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, badRequest, errorMessage } from "../errors.ts";
import type { FileRow } from "../files/file.ts";
import { applyActions, parseActions, type Action, type ActionEffects, type ActionOutcome, type ActionReferences } from "./actions.ts";
import { compileConditions, conditionsHold, parseConditions, type Condition } from "./conditions.ts";
import { factsOf, type FactName, type FactSources } from "./file-facts.ts";

export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 1000;

interface RuleRow {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  enabled: number;
  match: "all" | "any";
  conditions: string;
  actions: string;
  position: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface Rule {
  id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  match: "all" | "any";
  conditions: Condition[];
  actions: Action[];
  position: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  /** Files it was applied to (each file counted once). */
  applied_files: number;
  last_applied_at: string | null;
}

export interface RuleInput {
  name: string;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  match?: "all" | "any" | undefined;
  conditions?: unknown;
  actions: unknown;
  position?: number | undefined;
}

export type RulePatch = Partial<RuleInput>;

export interface RuleApplication {
  id: string;
  rule_id: string;
  rule_name: string;
  file_id: string;
  trigger: "analysis" | "library";
  job_id: string | null;
  status: "applied" | "failed";
  outcomes: ActionOutcome[];
  error: string | null;
  applied_at: string;
}

function ruleNotFound(id: string): ApiError {
  return new ApiError("RULE_NOT_FOUND", `rule ${id} not found`);
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > NAME_MAX || /[\u0000-\u001f]/.test(trimmed)) throw badRequest(`name: must be 1-${NAME_MAX} characters without control characters`);
  return trimmed;
}

function checkDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null || description.trim() === "") return null;
  if (description.length > DESCRIPTION_MAX) throw badRequest(`description: at most ${DESCRIPTION_MAX} characters`);
  return description.trim();
}

/** What creating and changing a rule needs. */
export type RuleStore = { sql: SqlClient; clock: Clock };

async function nameTaken(sql: SqlClient, orgId: string, name: string, except: string | null): Promise<boolean> {
  return (await sql.one("SELECT 1 FROM rules WHERE org_id = ? AND lower(name) = lower(?) AND id <> ?", [orgId, name, except ?? ""])) !== null;
}

async function toRule(sql: SqlClient, row: RuleRow): Promise<Rule> {
  const stats = (await sql.one<{ files: number; last: string | null }>(
    "SELECT count(DISTINCT file_id) AS files, max(applied_at) AS last FROM rule_applications WHERE rule_id = ? AND status = 'applied'",
    [row.id],
  ))!;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    enabled: row.enabled === 1,
    match: row.match,
    conditions: JSON.parse(row.conditions) as Condition[],
    actions: JSON.parse(row.actions) as Action[],
    position: row.position,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    applied_files: stats.files,
    last_applied_at: stats.last,
  };
}

async function ruleRow(sql: SqlClient, orgId: string, id: string): Promise<RuleRow> {
  const row = await sql.one<RuleRow>("SELECT * FROM rules WHERE id = ? AND org_id = ?", [id.toLowerCase(), orgId]);
  if (!row) throw ruleNotFound(id);
  return row;
}

async function toRules(sql: SqlClient, rows: RuleRow[]): Promise<Rule[]> {
  const rules: Rule[] = [];
  for (const row of rows) rules.push(await toRule(sql, row));
  return rules;
}

export async function getRule(sql: SqlClient, orgId: string, id: string): Promise<Rule> {
  return toRule(sql, await ruleRow(sql, orgId, id));
}

export async function listRules(sql: SqlClient, orgId: string, limit: number, offset: number): Promise<{ items: Rule[]; total: number }> {
  const total = (await sql.one<{ n: number }>("SELECT count(*) AS n FROM rules WHERE org_id = ?", [orgId]))!.n;
  const rows = await sql.all<RuleRow>("SELECT * FROM rules WHERE org_id = ? ORDER BY position, created_at, id LIMIT ? OFFSET ?", [orgId, limit, offset]);
  return { items: await toRules(sql, rows), total };
}

export async function createRule(store: RuleStore, orgId: string, createdBy: string | null, input: RuleInput, refs: ActionReferences): Promise<Rule> {
  const { sql, clock } = store;
  const name = checkName(input.name);
  const description = checkDescription(input.description);
  const conditions = parseConditions(input.conditions ?? []);
  const actions = await parseActions(store, orgId, input.actions, refs);
  if (await nameTaken(sql, orgId, name, null)) throw new ApiError("RULE_NAME_EXISTS", `a rule named "${name}" already exists`);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  await sql.run(
    `INSERT INTO rules (id, org_id, name, description, enabled, match, conditions, actions, position, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, orgId, name, description, input.enabled === false ? 0 : 1, input.match ?? "all", JSON.stringify(conditions), JSON.stringify(actions), input.position ?? 0, createdBy, now, now],
  );
  return getRule(sql, orgId, id);
}

export async function updateRule(store: RuleStore, orgId: string, id: string, patch: RulePatch, refs: ActionReferences): Promise<Rule> {
  const { sql, clock } = store;
  const row = await ruleRow(sql, orgId, id);
  const sets: string[] = [];
  const args: (string | number | null)[] = [];
  const set = (column: string, value: string | number | null) => (sets.push(`${column} = ?`), args.push(value));
  if (patch.name !== undefined) {
    const name = checkName(patch.name);
    if (await nameTaken(sql, orgId, name, row.id)) throw new ApiError("RULE_NAME_EXISTS", `a rule named "${name}" already exists`);
    set("name", name);
  }
  if (patch.description !== undefined) set("description", checkDescription(patch.description));
  if (patch.enabled !== undefined) set("enabled", patch.enabled ? 1 : 0);
  if (patch.match !== undefined) set("match", patch.match);
  if (patch.conditions !== undefined) set("conditions", JSON.stringify(parseConditions(patch.conditions)));
  if (patch.actions !== undefined) set("actions", JSON.stringify(await parseActions(store, orgId, patch.actions, refs)));
  if (patch.position !== undefined) set("position", patch.position);
  if (sets.length) await sql.run(`UPDATE rules SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`, [...args, isoAt(clock.now()), row.id]);
  return getRule(sql, orgId, row.id);
}

/** Deletes the rule; the files it changed keep their changes and its applications stay in their history. */
export async function deleteRule(sql: SqlClient, orgId: string, id: string): Promise<void> {
  const row = await ruleRow(sql, orgId, id);
  await sql.run("DELETE FROM rules WHERE id = ?", [row.id]);
}

/** Whether the organization has any enabled rule (no job is queued for files of one without). */
export async function hasEnabledRules(sql: SqlClient, orgId: string): Promise<boolean> {
  return (await sql.one("SELECT 1 FROM rules WHERE org_id = ? AND enabled = 1 LIMIT 1", [orgId])) !== null;
}

/**
 * A rule's conditions ready to evaluate over many files, reading through `sql` (a client or the
 * caller's transaction) the facts they name.
 */
export function matcherOf(sql: SqlClient, sources: FactSources, rule: Pick<Rule, "conditions" | "match">): (file: FileRow) => Promise<boolean> {
  const compiled = compileConditions(rule.conditions);
  const wanted = new Set<FactName>(rule.conditions.map((c) => c.field));
  return async (file) => compiled.length === 0 || conditionsHold(compiled, rule.match, await factsOf(sql, sources, file, wanted));
}

export interface Applied {
  rule: Rule;
  application: RuleApplication;
  /** Webhooks the rule's call_webhook actions name. */
  webhookIds: string[];
}

/**
 * Applies `rules` (in their order) to the file inside the caller's transaction `tx`: each whose
 * conditions hold takes its actions, in a savepoint per rule with the record of its application;
 * a later rule sees what the ones before it changed. A rule whose action fails (its folder deleted
 * since) is recorded `failed` with the reason and changes nothing. Returns what was applied.
 *
 * The file's row is locked first (PostgreSQL; SQLite has one writer): two processes applying
 * rules to one file take turns, the second seeing the first's changes (tags are read, changed and
 * written whole: without the lock one would undo the other's), and an apply-to-library job's
 * second run over a file it already handled (a lease taken over) applies nothing.
 */
export async function applyRulesTo(
  tx: SqlClient,
  clock: Clock,
  sources: FactSources,
  fileId: string,
  rules: Rule[],
  trigger: { kind: "analysis" | "library"; jobId: string | null },
  effects: ActionEffects,
): Promise<Applied[]> {
  const files = sources.files.withTx(tx);
  if (!(await tx.one(`SELECT id FROM files WHERE id = ? ${tx.dialect.forUpdate}`, [fileId]))) return [];
  if (trigger.jobId && (await handledByJob(tx, trigger.jobId, fileId))) return [];
  const applied: Applied[] = [];
  for (const rule of rules) {
    const file = await files.byId(fileId);
    if (!file || file.deleted_at) break;
    if (!(await matcherOf(tx, sources, rule)(file))) continue;
    const application: RuleApplication = {
      id: crypto.randomUUID(),
      rule_id: rule.id,
      rule_name: rule.name,
      file_id: file.id,
      trigger: trigger.kind,
      job_id: trigger.jobId,
      status: "applied",
      outcomes: [],
      error: null,
      applied_at: isoAt(clock.now()),
    };
    // SAVEPOINT, ROLLBACK TO and RELEASE are spelled the same on both engines.
    await tx.run("SAVEPOINT rule_application");
    try {
      application.outcomes = await applyActions(tx, files, file, rule.actions, effects);
      await recordApplication(tx, file.org_id, application);
      await tx.run("RELEASE SAVEPOINT rule_application");
    } catch (err) {
      await tx.run("ROLLBACK TO SAVEPOINT rule_application");
      await tx.run("RELEASE SAVEPOINT rule_application");
      application.status = "failed";
      application.error = errorMessage(err);
      application.outcomes = [];
      await recordApplication(tx, file.org_id, application);
    }
    applied.push({ rule, application, webhookIds: application.status === "applied" ? rule.actions.flatMap((a) => (a.type === "call_webhook" ? [a.webhook_id] : [])) : [] });
  }
  return applied;
}

async function recordApplication(tx: SqlClient, orgId: string, a: RuleApplication): Promise<void> {
  await tx.run(
    `INSERT INTO rule_applications (id, org_id, rule_id, rule_name, file_id, trigger, job_id, status, outcomes, error, applied_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [a.id, orgId, a.rule_id, a.rule_name, a.file_id, a.trigger, a.job_id, a.status, JSON.stringify(a.outcomes), a.error, a.applied_at],
  );
}

/** The organization's enabled rules, in the order they run. */
export async function enabledRules(sql: SqlClient, orgId: string): Promise<Rule[]> {
  return toRules(sql, await sql.all<RuleRow>("SELECT * FROM rules WHERE org_id = ? AND enabled = 1 ORDER BY position, created_at, id", [orgId]));
}

interface ApplicationRow extends Omit<RuleApplication, "outcomes"> {
  outcomes: string;
}

const toApplication = (row: ApplicationRow): RuleApplication => ({ ...row, outcomes: JSON.parse(row.outcomes) as ActionOutcome[] });

/** A file's rule applications, newest first. */
const APPLICATION_FIELDS = "id, rule_id, rule_name, file_id, trigger, job_id, status, outcomes, error, applied_at";

/** A file's rule applications, newest first. */
export async function applicationsOfFile(sql: SqlClient, orgId: string, fileId: string, limit: number, offset: number): Promise<{ items: RuleApplication[]; total: number }> {
  const total = (await sql.one<{ n: number }>("SELECT count(*) AS n FROM rule_applications WHERE file_id = ? AND org_id = ?", [fileId, orgId]))!.n;
  const rows = await sql.all<ApplicationRow>(
    `SELECT ${APPLICATION_FIELDS} FROM rule_applications WHERE file_id = ? AND org_id = ? ORDER BY applied_at DESC, rowid DESC LIMIT ? OFFSET ?`,
    [fileId, orgId, limit, offset],
  );
  return { items: rows.map(toApplication), total };
}

/** A rule's applications, newest first. */
export async function applicationsOfRule(sql: SqlClient, orgId: string, ruleId: string, limit: number, offset: number): Promise<{ items: RuleApplication[]; total: number }> {
  const rule = await ruleRow(sql, orgId, ruleId);
  const total = (await sql.one<{ n: number }>("SELECT count(*) AS n FROM rule_applications WHERE rule_id = ?", [rule.id]))!.n;
  const rows = await sql.all<ApplicationRow>(`SELECT ${APPLICATION_FIELDS} FROM rule_applications WHERE rule_id = ? ORDER BY applied_at DESC, rowid DESC LIMIT ? OFFSET ?`, [rule.id, limit, offset]);
  return { items: rows.map(toApplication), total };
}

/** Whether an apply-to-library job already handled the file (a resumed job skips it). */
export async function handledByJob(sql: SqlClient, jobId: string, fileId: string): Promise<boolean> {
  return (await sql.one("SELECT 1 FROM rule_applications WHERE job_id = ? AND file_id = ?", [jobId, fileId])) !== null;
}

/** How many files an apply-to-library job applied its rule to, and how many failed. */
export async function applicationsOfJob(sql: SqlClient, jobId: string): Promise<{ applied: number; failed: number }> {
  const row = (await sql.one<{ applied: number; failed: number }>(
    "SELECT count(CASE WHEN status = 'applied' THEN 1 END) AS applied, count(CASE WHEN status = 'failed' THEN 1 END) AS failed FROM rule_applications WHERE job_id = ?",
    [jobId],
  ))!;
  return { applied: row.applied, failed: row.failed };
}

/** Files a rule considers: live ones whose analysis has ended (the others meet the rules when it does). */
const SETTLED = "deleted_at IS NULL AND processing_status IN ('completed','stored','failed')";

/** The organization's settled files after `afterId`, in id order, a page at a time. */
export async function settledFiles(sql: SqlClient, orgId: string, afterId: string, limit: number): Promise<FileRow[]> {
  return sql.all<FileRow>(`SELECT * FROM files WHERE org_id = ? AND id > ? AND ${SETTLED} ORDER BY id LIMIT ?`, [orgId, afterId, limit]);
}

export async function countSettledFiles(sql: SqlClient, orgId: string): Promise<number> {
  return (await sql.one<{ n: number }>(`SELECT count(*) AS n FROM files WHERE org_id = ? AND ${SETTLED}`, [orgId]))!.n;
}

export interface DryRunFile {
  id: string;
  filename: string;
  title: string | null;
  media_type: string;
  project_id: string;
  folder_id: string | null;
}

/**
 * The files a rule's conditions hold for, without changing anything: the first `limit` of them
 * (in id order) and how many there are in all among the settled files.
 */
export async function dryRun(sql: SqlClient, sources: FactSources, orgId: string, rule: { conditions: unknown; match?: "all" | "any" | undefined }, limit: number) {
  const matches = matcherOf(sql, sources, { conditions: parseConditions(rule.conditions ?? []), match: rule.match ?? "all" });
  const found: DryRunFile[] = [];
  let matched = 0;
  let scanned = 0;
  for (let after = ""; ; ) {
    const page = await settledFiles(sql, orgId, after, 500);
    if (!page.length) break;
    for (const file of page) {
      scanned += 1;
      if (!(await matches(file))) continue;
      matched += 1;
      if (found.length < limit) found.push({ id: file.id, filename: file.filename, title: file.title, media_type: file.media_type, project_id: file.project_id, folder_id: file.folder_id });
    }
    after = page[page.length - 1]!.id;
  }
  return { matched_count: matched, scanned_count: scanned, files: found, has_more: matched > found.length };
}
