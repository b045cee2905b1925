/**
 * An organization's rules and the record of their applications: the only writer of `rules` and
 * `rule_applications`. A rule is a name, conditions over what analysis found (conditions.ts),
 * `match` (all or any of them) and actions (actions.ts). Rules run in `position` order, each
 * seeing what the rules before it changed. `applyRulesTo` is the one way a rule reaches a file,
 * whether its analysis just ended or an apply-to-library job walks the library.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError, badRequest, errorMessage } from "../errors.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { FileRow } from "../files/file.ts";
import { applyActions, parseActions, type Action, type ActionEffects, type ActionOutcome, type ActionReferences } from "./actions.ts";
import { compileConditions, conditionsHold, parseConditions, type Condition } from "./conditions.ts";
import { factsOf } from "./file-facts.ts";

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

function nameTaken(db: Database, orgId: string, name: string, except: string | null): boolean {
  return db.query("SELECT 1 FROM rules WHERE org_id = ? AND lower(name) = lower(?) AND id IS NOT ?").get(orgId, name, except) !== null;
}

function toRule(db: Database, row: RuleRow): Rule {
  const stats = db
    .query<{ files: number; last: string | null }, [string]>("SELECT count(DISTINCT file_id) AS files, max(applied_at) AS last FROM rule_applications WHERE rule_id = ? AND status = 'applied'")
    .get(row.id)!;
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

function ruleRow(db: Database, orgId: string, id: string): RuleRow {
  const row = db.query<RuleRow, [string, string]>("SELECT * FROM rules WHERE id = ? AND org_id = ?").get(id.toLowerCase(), orgId);
  if (!row) throw ruleNotFound(id);
  return row;
}

export function getRule(db: Database, orgId: string, id: string): Rule {
  return toRule(db, ruleRow(db, orgId, id));
}

export function listRules(db: Database, orgId: string, limit: number, offset: number): { items: Rule[]; total: number } {
  const total = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM rules WHERE org_id = ?").get(orgId)!.n;
  const rows = db.query<RuleRow, [string, number, number]>("SELECT * FROM rules WHERE org_id = ? ORDER BY position, created_at, id LIMIT ? OFFSET ?").all(orgId, limit, offset);
  return { items: rows.map((r) => toRule(db, r)), total };
}

export function createRule(db: Database, clock: Clock, orgId: string, createdBy: string | null, input: RuleInput, refs: ActionReferences): Rule {
  const name = checkName(input.name);
  const description = checkDescription(input.description);
  const conditions = parseConditions(input.conditions ?? []);
  const actions = parseActions(db, orgId, input.actions, refs);
  if (nameTaken(db, orgId, name, null)) throw new ApiError("RULE_NAME_EXISTS", `a rule named "${name}" already exists`);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  db.query(
    `INSERT INTO rules (id, org_id, name, description, enabled, match, conditions, actions, position, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, orgId, name, description, input.enabled === false ? 0 : 1, input.match ?? "all", JSON.stringify(conditions), JSON.stringify(actions), input.position ?? 0, createdBy, now, now);
  return getRule(db, orgId, id);
}

export function updateRule(db: Database, clock: Clock, orgId: string, id: string, patch: RulePatch, refs: ActionReferences): Rule {
  const row = ruleRow(db, orgId, id);
  const sets: string[] = [];
  const args: (string | number | null)[] = [];
  const set = (column: string, value: string | number | null) => (sets.push(`${column} = ?`), args.push(value));
  if (patch.name !== undefined) {
    const name = checkName(patch.name);
    if (nameTaken(db, orgId, name, row.id)) throw new ApiError("RULE_NAME_EXISTS", `a rule named "${name}" already exists`);
    set("name", name);
  }
  if (patch.description !== undefined) set("description", checkDescription(patch.description));
  if (patch.enabled !== undefined) set("enabled", patch.enabled ? 1 : 0);
  if (patch.match !== undefined) set("match", patch.match);
  if (patch.conditions !== undefined) set("conditions", JSON.stringify(parseConditions(patch.conditions)));
  if (patch.actions !== undefined) set("actions", JSON.stringify(parseActions(db, orgId, patch.actions, refs)));
  if (patch.position !== undefined) set("position", patch.position);
  if (sets.length) db.query(`UPDATE rules SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(...args, isoAt(clock.now()), row.id);
  return getRule(db, orgId, row.id);
}

/** Deletes the rule; the files it changed keep their changes and its applications stay in their history. */
export function deleteRule(db: Database, orgId: string, id: string): void {
  const row = ruleRow(db, orgId, id);
  db.query("DELETE FROM rules WHERE id = ?").run(row.id);
}

/** Whether the organization has any enabled rule (no job is queued for files of one without). */
export function hasEnabledRules(db: Database, orgId: string): boolean {
  return db.query("SELECT 1 FROM rules WHERE org_id = ? AND enabled = 1 LIMIT 1").get(orgId) !== null;
}

/** A rule ready to evaluate over many files. */
export interface RuleMatcher {
  rule: Rule;
  matches(file: FileRow): boolean;
}

export function matcherOf(db: Database, files: FileRepository, rule: Pick<Rule, "conditions" | "match"> & Partial<Rule>): (file: FileRow) => boolean {
  const compiled = compileConditions(rule.conditions);
  return (file) => conditionsHold(compiled, rule.match, factsOf(db, files, file));
}

export interface Applied {
  rule: Rule;
  application: RuleApplication;
  /** Webhooks the rule's call_webhook actions name. */
  webhookIds: string[];
}

/**
 * Applies `rules` (in their order) to the file: each whose conditions hold takes its actions, in
 * one transaction per rule with the record of its application; a later rule sees what the ones
 * before it changed. A rule whose action fails (its folder deleted since) is recorded `failed`
 * with the reason and changes nothing. Returns what was applied.
 */
export function applyRulesTo(
  db: Database,
  clock: Clock,
  files: FileRepository,
  fileId: string,
  rules: Rule[],
  trigger: { kind: "analysis" | "library"; jobId: string | null },
  effects: ActionEffects,
): Applied[] {
  const applied: Applied[] = [];
  for (const rule of rules) {
    const file = files.byId(fileId);
    if (!file || file.deleted_at) break;
    if (!matcherOf(db, files, rule)(file)) continue;
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
    try {
      db.transaction(() => {
        application.outcomes = applyActions(db, files, file, rule.actions, effects);
        recordApplication(db, file.org_id, application);
      })();
    } catch (err) {
      application.status = "failed";
      application.error = errorMessage(err);
      application.outcomes = [];
      recordApplication(db, file.org_id, application);
    }
    applied.push({ rule, application, webhookIds: application.status === "applied" ? rule.actions.flatMap((a) => (a.type === "call_webhook" ? [a.webhook_id] : [])) : [] });
  }
  return applied;
}

function recordApplication(db: Database, orgId: string, a: RuleApplication): void {
  db.query(
    `INSERT INTO rule_applications (id, org_id, rule_id, rule_name, file_id, trigger, job_id, status, outcomes, error, applied_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(a.id, orgId, a.rule_id, a.rule_name, a.file_id, a.trigger, a.job_id, a.status, JSON.stringify(a.outcomes), a.error, a.applied_at);
}

/** The organization's enabled rules, in the order they run. */
export function enabledRules(db: Database, orgId: string): Rule[] {
  return db
    .query<RuleRow, [string]>("SELECT * FROM rules WHERE org_id = ? AND enabled = 1 ORDER BY position, created_at, id")
    .all(orgId)
    .map((r) => toRule(db, r));
}

interface ApplicationRow extends Omit<RuleApplication, "outcomes"> {
  outcomes: string;
}

const toApplication = (row: ApplicationRow): RuleApplication => ({ ...row, outcomes: JSON.parse(row.outcomes) as ActionOutcome[] });

/** A file's rule applications, newest first. */
export function applicationsOfFile(db: Database, orgId: string, fileId: string, limit: number, offset: number): { items: RuleApplication[]; total: number } {
  const total = db.query<{ n: number }, [string, string]>("SELECT count(*) AS n FROM rule_applications WHERE file_id = ? AND org_id = ?").get(fileId, orgId)!.n;
  const rows = db
    .query<ApplicationRow, [string, string, number, number]>(
      "SELECT id, rule_id, rule_name, file_id, trigger, job_id, status, outcomes, error, applied_at FROM rule_applications WHERE file_id = ? AND org_id = ? ORDER BY applied_at DESC, rowid DESC LIMIT ? OFFSET ?",
    )
    .all(fileId, orgId, limit, offset);
  return { items: rows.map(toApplication), total };
}

/** A rule's applications, newest first. */
export function applicationsOfRule(db: Database, orgId: string, ruleId: string, limit: number, offset: number): { items: RuleApplication[]; total: number } {
  const rule = ruleRow(db, orgId, ruleId);
  const total = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM rule_applications WHERE rule_id = ?").get(rule.id)!.n;
  const rows = db
    .query<ApplicationRow, [string, number, number]>(
      "SELECT id, rule_id, rule_name, file_id, trigger, job_id, status, outcomes, error, applied_at FROM rule_applications WHERE rule_id = ? ORDER BY applied_at DESC, rowid DESC LIMIT ? OFFSET ?",
    )
    .all(rule.id, limit, offset);
  return { items: rows.map(toApplication), total };
}

/** Whether an apply-to-library job already handled the file (a resumed job skips it). */
export function handledByJob(db: Database, jobId: string, fileId: string): boolean {
  return db.query("SELECT 1 FROM rule_applications WHERE job_id = ? AND file_id = ?").get(jobId, fileId) !== null;
}

/** How many files an apply-to-library job applied its rule to, and how many failed. */
export function applicationsOfJob(db: Database, jobId: string): { applied: number; failed: number } {
  const row = db
    .query<{ applied: number | null; failed: number | null }, [string]>(
      "SELECT sum(status = 'applied') AS applied, sum(status = 'failed') AS failed FROM rule_applications WHERE job_id = ?",
    )
    .get(jobId)!;
  return { applied: row.applied ?? 0, failed: row.failed ?? 0 };
}

/** Files a rule considers: live ones whose analysis has ended (the others meet the rules when it does). */
const SETTLED = "deleted_at IS NULL AND processing_status IN ('completed','stored','failed')";

/** The organization's settled files after `afterId`, in id order, a page at a time. */
export function settledFiles(db: Database, orgId: string, afterId: string, limit: number): FileRow[] {
  return db.query<FileRow, [string, string, number]>(`SELECT * FROM files WHERE org_id = ? AND id > ? AND ${SETTLED} ORDER BY id LIMIT ?`).all(orgId, afterId, limit);
}

export function countSettledFiles(db: Database, orgId: string): number {
  return db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM files WHERE org_id = ? AND ${SETTLED}`).get(orgId)!.n;
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
export function dryRun(db: Database, files: FileRepository, orgId: string, rule: { conditions: unknown; match?: "all" | "any" | undefined }, limit: number) {
  const matches = matcherOf(db, files, { conditions: parseConditions(rule.conditions ?? []), match: rule.match ?? "all" });
  const found: DryRunFile[] = [];
  let matched = 0;
  let scanned = 0;
  for (let after = ""; ; ) {
    const page = settledFiles(db, orgId, after, 500);
    if (!page.length) break;
    for (const file of page) {
      scanned += 1;
      if (!matches(file)) continue;
      matched += 1;
      if (found.length < limit) found.push({ id: file.id, filename: file.filename, title: file.title, media_type: file.media_type, project_id: file.project_id, folder_id: file.folder_id });
    }
    after = page[page.length - 1]!.id;
  }
  return { matched_count: matched, scanned_count: scanned, files: found, has_more: matched > found.length };
}
