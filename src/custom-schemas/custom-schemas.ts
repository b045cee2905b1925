/**
 * Custom extraction schemas: an organization's named JSON Schemas for structured extraction
 * (spec "Custom extraction schemas"). Owns the resource's rules: names trimmed, 1-255
 * characters and unique per organization case-insensitively; description and prompt_hint
 * bounds; the schema accepted only when schema-rules.ts finds no problem; PUT as a full
 * replacement; newest-first listing. Every refusal carries the spec's CUSTOM_SCHEMA_* code. On the
 * data-access port (docs/scale-out.md): a change first locks the organization's row (PostgreSQL), so
 * two processes cannot both take one name.
 */
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError } from "../errors.ts";
import { nameKey } from "../tenancy/names.ts";
import { lockOrganization } from "../tenancy/organizations.ts";
import { countFields, schemaProblems } from "./schema-rules.ts";

export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 1000;
export const PROMPT_HINT_MAX = 2000;

export interface CustomSchema {
  id: string;
  name: string;
  description: string | null;
  schema: Record<string, unknown>;
  prompt_hint: string | null;
  field_count: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** What GET /custom-extraction-schemas lists: the resource without its two large fields. */
export type CustomSchemaSummary = Omit<CustomSchema, "schema" | "prompt_hint">;

/** Create and PUT take the same body: PUT replaces, so an absent optional field is cleared. */
export interface CustomSchemaInput {
  name: string;
  description?: string | null;
  schema: unknown;
  prompt_hint?: string | null;
}

interface Row extends Omit<CustomSchema, "schema"> {
  schema: string;
}

const COLUMNS = "id, name, description, schema, prompt_hint, field_count, created_by, created_at, updated_at";
const SUMMARY_COLUMNS = "id, name, description, field_count, created_by, created_at, updated_at";
const CONTROL = /[\u0000-\u001f\u007f]/;

export async function getCustomSchema(db: SqlClient, orgId: string, id: string): Promise<CustomSchema> {
  const row = await db.one<Row>(`SELECT ${COLUMNS} FROM custom_schemas WHERE id = ? AND org_id = ?`, [id, orgId]);
  if (!row) throw customSchemaNotFound(id);
  return { ...row, schema: JSON.parse(row.schema) as Record<string, unknown> };
}

export async function listCustomSchemas(
  db: SqlClient,
  orgId: string,
  limit: number,
  offset: number,
): Promise<{ items: CustomSchemaSummary[]; total: number }> {
  const total = (await db.one<{ n: number }>("SELECT count(*) AS n FROM custom_schemas WHERE org_id = ?", [orgId]))?.n ?? 0;
  const items = await db.all<CustomSchemaSummary>(
    `SELECT ${SUMMARY_COLUMNS} FROM custom_schemas WHERE org_id = ?
     ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`,
    [orgId, limit, offset],
  );
  return { items, total };
}

export async function createCustomSchema(
  db: SqlClient,
  clock: Clock,
  orgId: string,
  createdBy: string | null,
  input: CustomSchemaInput,
): Promise<CustomSchema> {
  const fields = validInput(input);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    await assertNameFree(tx, orgId, fields.name, null);
    await tx.run(
      `INSERT INTO custom_schemas (id, org_id, name, name_key, description, schema, prompt_hint, field_count,
         created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, orgId, fields.name, nameKey(fields.name), fields.description, fields.schemaJson, fields.promptHint, fields.fieldCount, createdBy, now, now],
    );
    return getCustomSchema(tx, orgId, id);
  });
}

export async function replaceCustomSchema(db: SqlClient, clock: Clock, orgId: string, id: string, input: CustomSchemaInput): Promise<CustomSchema> {
  await getCustomSchema(db, orgId, id); // an unknown id is 404 whatever the body holds
  const fields = validInput(input);
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    await getCustomSchema(tx, orgId, id); // deleted meanwhile
    await assertNameFree(tx, orgId, fields.name, id);
    await tx.run(
      `UPDATE custom_schemas SET name = ?, name_key = ?, description = ?, schema = ?, prompt_hint = ?, field_count = ?,
         updated_at = ?
       WHERE id = ? AND org_id = ?`,
      [fields.name, nameKey(fields.name), fields.description, fields.schemaJson, fields.promptHint, fields.fieldCount, isoAt(clock.now()), id, orgId],
    );
    return getCustomSchema(tx, orgId, id);
  });
}

export function deleteCustomSchema(db: SqlClient, orgId: string, id: string): Promise<CustomSchema> {
  return db.transaction(async (tx) => {
    const schema = await getCustomSchema(tx, orgId, id);
    await tx.run("DELETE FROM custom_schemas WHERE id = ? AND org_id = ?", [id, orgId]);
    return schema;
  });
}

export function customSchemaNotFound(id: string) {
  return new ApiError("CUSTOM_SCHEMA_NOT_FOUND", `custom extraction schema ${id} not found`);
}

interface ValidInput {
  name: string;
  description: string | null;
  promptHint: string | null;
  schemaJson: string;
  fieldCount: number;
}

/** Field rules in body order, so the first refusal names the first bad field. */
function validInput(input: CustomSchemaInput): ValidInput {
  const name = input.name.trim();
  if (name.length === 0) throw new ApiError("CUSTOM_SCHEMA_INVALID_NAME", "name: must not be blank");
  const nameLength = characters(name);
  if (nameLength > NAME_MAX) {
    throw new ApiError("CUSTOM_SCHEMA_INVALID_NAME", `name: must be at most ${NAME_MAX} characters (got ${nameLength})`);
  }
  if (CONTROL.test(name)) throw new ApiError("CUSTOM_SCHEMA_INVALID_NAME", "name: must not contain control characters");

  const description = input.description ?? null;
  if (description !== null && characters(description) > DESCRIPTION_MAX) {
    throw new ApiError(
      "CUSTOM_SCHEMA_INVALID_DESCRIPTION",
      `description: must be at most ${DESCRIPTION_MAX} characters (got ${characters(description)})`,
    );
  }

  const problems = schemaProblems(input.schema);
  if (problems.length > 0) throw new ApiError("CUSTOM_SCHEMA_INVALID_SCHEMA", `invalid schema: ${problems.join("; ")}`);

  const promptHint = input.prompt_hint ?? null;
  if (promptHint !== null && characters(promptHint) > PROMPT_HINT_MAX) {
    throw new ApiError(
      "CUSTOM_SCHEMA_INVALID_PROMPT_HINT",
      `prompt_hint: must be at most ${PROMPT_HINT_MAX} characters (got ${characters(promptHint)})`,
    );
  }
  return { name, description, promptHint, schemaJson: JSON.stringify(input.schema), fieldCount: countFields(input.schema) };
}

/** Lengths are in Unicode characters (code points), not UTF-16 units: an emoji is one character. */
function characters(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

async function assertNameFree(db: SqlClient, orgId: string, name: string, exceptId: string | null): Promise<void> {
  const clash = await db.one<{ id: string; name: string }>("SELECT id, name FROM custom_schemas WHERE org_id = ? AND name_key = ?", [orgId, nameKey(name)]);
  if (clash && clash.id !== exceptId) {
    throw new ApiError(
      "CUSTOM_SCHEMA_NAME_EXISTS",
      `a custom extraction schema named "${clash.name}" already exists (names are compared case-insensitively)`,
    );
  }
}
