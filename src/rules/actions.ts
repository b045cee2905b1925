/**
 * A rule's actions: their check when a rule is saved (references to folders, projects and
 * webhooks must exist in the organization) and their application to one file. Actions change
 * the file through FileRepository only, so a rule does nothing a user could not do by hand.
 * Applying a rule twice leaves the file as applying it once did (tags are a set, a move to where
 * the file is changes nothing), which is what lets "apply to library" resume after a crash.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { getCustomSchema } from "../custom-schemas/custom-schemas.ts";
import { badRequest } from "../errors.ts";
import type { FileRepository } from "../files/file-repository.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import { placement } from "../folders/placement.ts";
import { MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH, parseTags } from "../files/file-fields.ts";

export type Action =
  | { type: "add_tags"; tags: string[] }
  | { type: "remove_tags"; tags: string[] }
  | { type: "set_title"; title: string }
  | { type: "move"; folder_id?: string | null; project_id?: string | null }
  | { type: "call_webhook"; webhook_id: string }
  | { type: "run_schema"; schema_id: string };

export const ACTION_TYPES = ["add_tags", "remove_tags", "set_title", "move", "call_webhook", "run_schema"] as const;
export const MAX_ACTIONS = 20;

/** What one action did to one file, for the application's record. */
export interface ActionOutcome {
  type: Action["type"];
  outcome: string;
}

/** What applying an action starts beyond the file's row, in the application's transaction (the caller binds it). */
export interface ActionEffects {
  /** Queues the filling of a custom extraction schema for the file (it runs models: not in a transaction). */
  runSchema(file: FileRow, schemaId: string): Promise<void>;
}

/** Checks what an action may refer to when a rule is saved (webhooks live elsewhere). */
export interface ActionReferences {
  webhookExists(id: string): Promise<boolean>;
}

/** `sql` for where a move goes (placement) and the schemas a run_schema names. */
export async function parseActions(stores: { sql: SqlClient }, orgId: string, input: unknown, refs: ActionReferences): Promise<Action[]> {
  if (!Array.isArray(input) || input.length === 0) throw badRequest("actions: must be a non-empty array");
  if (input.length > MAX_ACTIONS) throw badRequest(`actions: at most ${MAX_ACTIONS} (got ${input.length})`);
  const actions: Action[] = [];
  for (const [i, raw] of input.entries()) actions.push(await parseAction(stores, orgId, raw, `actions.${i}`, refs));
  return actions;
}

async function parseAction({ sql }: { sql: SqlClient }, orgId: string, raw: unknown, at: string, refs: ActionReferences): Promise<Action> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badRequest(`${at}: must be an object with a type`);
  const body = raw as Record<string, unknown>;
  const only = (...allowed: string[]) => {
    const extra = Object.keys(body).find((k) => k !== "type" && !allowed.includes(k));
    if (extra) throw badRequest(`${at}: unknown property ${extra} for ${String(body.type)}`);
  };
  switch (body.type) {
    case "add_tags":
    case "remove_tags": {
      only("tags");
      if (!Array.isArray(body.tags) || body.tags.length === 0) throw badRequest(`${at}.tags: must be a non-empty array of tags (1-${MAX_TAG_LENGTH} characters each)`);
      return { type: body.type, tags: parseTags(body.tags, { maxTags: MAX_TAGS, field: `${at}.tags` }) };
    }
    case "set_title": {
      only("title");
      if (typeof body.title !== "string" || body.title.trim() === "" || body.title.length > MAX_TITLE_LENGTH) {
        throw badRequest(`${at}.title: must be a string of 1-${MAX_TITLE_LENGTH} characters`);
      }
      return { type: "set_title", title: body.title.trim() };
    }
    case "move": {
      only("folder_id", "project_id");
      const folderId = optionalId(body.folder_id, `${at}.folder_id`);
      const projectId = optionalId(body.project_id, `${at}.project_id`);
      if (!folderId && !projectId) throw badRequest(`${at}: move needs folder_id or project_id`);
      // Throws FOLDER_NOT_FOUND / PROJECT_NOT_FOUND, or 400 when the folder is in another project.
      await placement(sql, orgId, folderId, projectId);
      return { type: "move", ...(folderId ? { folder_id: folderId } : {}), ...(projectId ? { project_id: projectId } : {}) };
    }
    case "call_webhook": {
      only("webhook_id");
      const id = optionalId(body.webhook_id, `${at}.webhook_id`);
      if (!id) throw badRequest(`${at}.webhook_id: required`);
      if (!(await refs.webhookExists(id))) throw badRequest(`${at}.webhook_id: no webhook ${id} in this organization`);
      return { type: "call_webhook", webhook_id: id };
    }
    case "run_schema": {
      only("schema_id");
      const id = optionalId(body.schema_id, `${at}.schema_id`);
      if (!id) throw badRequest(`${at}.schema_id: required`);
      await getCustomSchema(sql, orgId, id); // 404 CUSTOM_SCHEMA_NOT_FOUND
      return { type: "run_schema", schema_id: id };
    }
    default:
      throw badRequest(`${at}.type: must be one of ${ACTION_TYPES.join(", ")}`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function optionalId(value: unknown, at: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || !UUID.test(value)) throw badRequest(`${at}: must be a UUID`);
  return value.toLowerCase();
}

/**
 * Applies the file-changing actions to the file, in order, inside the caller's transaction `tx`:
 * `files` writes through it (FileRepository.withTx), the move's placement reads through it.
 * `call_webhook` is recorded as queued here; the caller delivers it (webhooks are another
 * module's). `run_schema` queues its job through `effects`, in the same transaction. An action that cannot be applied any more (its folder was deleted since) throws.
 */
export async function applyActions(tx: SqlClient, files: FileRepository, file: FileRow, actions: Action[], effects: ActionEffects): Promise<ActionOutcome[]> {
  const outcomes: ActionOutcome[] = [];
  let row = file;
  for (const action of actions) {
    switch (action.type) {
      case "add_tags": {
        const tags = tagsOf(row);
        const have = new Set(tags.map((t) => t.toLowerCase()));
        const added = action.tags.filter((t) => !have.has(t.toLowerCase()));
        if (added.length && tags.length + added.length > MAX_TAGS) throw new Error(`adding ${added.join(", ")} would give the file more than ${MAX_TAGS} tags`);
        if (added.length) await files.edit(row.id, { tags: [...tags, ...added] });
        outcomes.push({ type: action.type, outcome: added.length ? `added ${added.join(", ")}` : "already tagged" });
        break;
      }
      case "remove_tags": {
        const drop = new Set(action.tags.map((t) => t.toLowerCase()));
        const tags = tagsOf(row);
        const kept = tags.filter((t) => !drop.has(t.toLowerCase()));
        if (kept.length !== tags.length) await files.edit(row.id, { tags: kept });
        outcomes.push({ type: action.type, outcome: kept.length !== tags.length ? `removed ${tags.filter((t) => drop.has(t.toLowerCase())).join(", ")}` : "no such tags" });
        break;
      }
      case "set_title": {
        if (row.title !== action.title) await files.edit(row.id, { title: action.title });
        outcomes.push({ type: action.type, outcome: row.title !== action.title ? `title set to "${action.title}"` : "title unchanged" });
        break;
      }
      case "move": {
        const to = await placement(tx, row.org_id, action.folder_id, action.project_id);
        const moved = to.projectId !== row.project_id || to.folderId !== row.folder_id;
        if (moved) await files.place(row.id, to.projectId, to.folderId);
        outcomes.push({ type: action.type, outcome: moved ? (to.folderId ? `moved into folder ${to.folderId}` : `moved to project ${to.projectId}`) : "already there" });
        break;
      }
      case "call_webhook":
        outcomes.push({ type: action.type, outcome: `delivery to webhook ${action.webhook_id} queued` });
        break;
      case "run_schema":
        await effects.runSchema(row, action.schema_id);
        outcomes.push({ type: action.type, outcome: `extraction with schema ${action.schema_id} queued` });
        break;
    }
    row = (await files.byId(row.id))!;
  }
  return outcomes;
}
