/**
 * HTTP binding of /custom-extraction-schemas (spec section "Custom extraction schemas").
 * The body schemas check types only: the lengths and the JSON Schema rules are the domain's, so
 * their refusals carry the spec's CUSTOM_SCHEMA_* codes instead of the generic VALIDATION_ERROR.
 */
import { Elysia, t } from "elysia";
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";
import { permissions } from "../http/permissions.ts";
import { Nullable, Page, page, pageQuery, Timestamp, Uuid, errorResponses } from "../http/shapes.ts";
import {
  createCustomSchema,
  deleteCustomSchema,
  DESCRIPTION_MAX,
  getCustomSchema,
  listCustomSchemas,
  NAME_MAX,
  PROMPT_HINT_MAX,
  replaceCustomSchema,
} from "./custom-schemas.ts";
import { ALLOWED_TYPES, SCHEMA_LIMITS } from "./schema-rules.ts";

const Name = t.String({
  error: "name must be a string",
  description: `1-${NAME_MAX} characters after trimming; unique in the organization, compared case-insensitively`,
});
const Description = t.String({ error: "description must be a string or null", description: `At most ${DESCRIPTION_MAX} characters` });
const PromptHint = t.String({
  error: "prompt_hint must be a string or null",
  description: `At most ${PROMPT_HINT_MAX} characters; the extraction prompt when an extract request gives none`,
});
const JsonSchema = t.Unknown({
  description:
    `A JSON Schema (draft-07) whose root type is "object": depth at most ${SCHEMA_LIMITS.maxDepth}, at most ` +
    `${SCHEMA_LIMITS.maxPropertiesPerObject} properties per object, ${SCHEMA_LIMITS.maxNodes} nodes and ` +
    `${SCHEMA_LIMITS.maxBytes} bytes; types ${ALLOWED_TYPES.join(", ")}; anyOf is the only composition keyword.`,
});

const summaryFields = {
  id: t.String({ format: "uuid" }),
  name: t.String(),
  description: Nullable(t.String()),
  field_count: t.Integer({ description: "Leaf fields: scalars, flattened through nested objects and array items" }),
  created_by: Nullable(t.String({ description: "The id of the API key that created it" })),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const CustomSchemaSummary = t.Object(summaryFields, { title: "CustomExtractionSchemaSummary" });

export const CustomSchemaResource = t.Object(
  {
    ...summaryFields,
    schema: t.Record(t.String(), t.Unknown(), { description: "The JSON Schema as stored" }),
    prompt_hint: Nullable(t.String()),
  },
  { title: "CustomExtractionSchema" },
);

const body = t.Object({
  name: Name,
  description: t.Optional(Nullable(Description)),
  schema: JsonSchema,
  prompt_hint: t.Optional(Nullable(PromptHint)),
});

const schemaParams = t.Object({ schema_id: Uuid("schema_id") });

export function customSchemaRoutes(ctx: { db: Database; clock: Clock }) {
  const { db, clock } = ctx;
  return new Elysia({ tags: ["Custom extraction schemas"] })
    .use(permissions)
    .post(
      "/custom-extraction-schemas",
      ({ principal, body, set }) => {
        set.status = 201;
        return createCustomSchema(db, clock, principal.orgId, principal.keyId, body);
      },
      {
        permission: "edit",
        body,
        response: { 201: CustomSchemaResource, ...errorResponses([400]) },
        detail: { summary: "Create a custom extraction schema" },
      },
    )
    .get(
      "/custom-extraction-schemas",
      ({ principal, query }) => {
        const { items, total } = listCustomSchemas(db, principal.orgId, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object(pageQuery(500, 50)),
        response: { 200: Page(CustomSchemaSummary), ...errorResponses([400]) },
        detail: { summary: "List custom extraction schemas, newest first" },
      },
    )
    .get(
      "/custom-extraction-schemas/:schema_id",
      ({ principal, params }) => getCustomSchema(db, principal.orgId, params.schema_id),
      {
        permission: "view",
        params: schemaParams,
        response: { 200: CustomSchemaResource, ...errorResponses([400, 404]) },
        detail: { summary: "Get a custom extraction schema" },
      },
    )
    .put(
      "/custom-extraction-schemas/:schema_id",
      ({ principal, params, body }) => replaceCustomSchema(db, clock, principal.orgId, params.schema_id, body),
      {
        permission: "edit",
        params: schemaParams,
        body,
        response: { 200: CustomSchemaResource, ...errorResponses([400, 404]) },
        detail: {
          summary: "Replace a custom extraction schema",
          description: "A full replacement: description or prompt_hint left out (or null) are cleared.",
        },
      },
    )
    .delete(
      "/custom-extraction-schemas/:schema_id",
      ({ principal, params }) => {
        const deleted = deleteCustomSchema(db, principal.orgId, params.schema_id);
        return { message: `custom extraction schema "${deleted.name}" deleted` };
      },
      {
        permission: "delete",
        params: schemaParams,
        response: { 200: t.Object({ message: t.String() }), ...errorResponses([400, 404]) },
        detail: { summary: "Delete a custom extraction schema" },
      },
    );
}
