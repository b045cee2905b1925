/**
 * The /custom-extraction-schemas routes' request and response schemas (TypeBox). The body
 * schemas check types only: the lengths and the JSON Schema rules are the domain's, so their
 * refusals carry the spec's CUSTOM_SCHEMA_* codes instead of the generic VALIDATION_ERROR.
 */
import { t } from "elysia";
import { Nullable, pageQuery, Timestamp, Uuid } from "../http/shapes.ts";
import { DESCRIPTION_MAX, NAME_MAX, PROMPT_HINT_MAX } from "./custom-schemas.ts";
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

/** POST and PUT (a full replacement). */
export const CustomSchemaBody = t.Object({
  name: Name,
  description: t.Optional(Nullable(Description)),
  schema: JsonSchema,
  prompt_hint: t.Optional(Nullable(PromptHint)),
});

export const SchemaParams = t.Object({ schema_id: Uuid("schema_id") });

export const CustomSchemasQuery = t.Object(pageQuery(500, 50));

export const SchemaDeleted = t.Object({ message: t.String() });
