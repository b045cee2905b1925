/** HTTP binding of /custom-extraction-schemas (spec section "Custom extraction schemas"); the schemas are model.ts's. */
import { Elysia } from "elysia";
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { permissions } from "../http/permissions.ts";
import { Page, page, errorResponses } from "../http/shapes.ts";
import { createCustomSchema, deleteCustomSchema, getCustomSchema, listCustomSchemas, replaceCustomSchema } from "./custom-schemas.ts";
import { CustomSchemaBody, CustomSchemaResource, CustomSchemasQuery, CustomSchemaSummary, SchemaDeleted, SchemaParams } from "./model.ts";

export function customSchemaRoutes(ctx: { sql: SqlClient; clock: Clock }) {
  const { sql: db, clock } = ctx;
  return new Elysia({ tags: ["Custom extraction schemas"] })
    .use(permissions)
    .post(
      "/custom-extraction-schemas",
      async ({ principal, body, set }) => {
        const schema = await createCustomSchema(db, clock, principal.orgId, principal.keyId, body);
        set.status = 201;
        return schema;
      },
      {
        permission: "edit",
        body: CustomSchemaBody,
        response: { 201: CustomSchemaResource, ...errorResponses([400]) },
        detail: { summary: "Create a custom extraction schema" },
      },
    )
    .get(
      "/custom-extraction-schemas",
      async ({ principal, query }) => {
        const { items, total } = await listCustomSchemas(db, principal.orgId, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: CustomSchemasQuery,
        response: { 200: Page(CustomSchemaSummary), ...errorResponses([400]) },
        detail: { summary: "List custom extraction schemas, newest first" },
      },
    )
    .get(
      "/custom-extraction-schemas/:schema_id",
      ({ principal, params }) => getCustomSchema(db, principal.orgId, params.schema_id),
      {
        permission: "view",
        params: SchemaParams,
        response: { 200: CustomSchemaResource, ...errorResponses([400, 404]) },
        detail: { summary: "Get a custom extraction schema" },
      },
    )
    .put(
      "/custom-extraction-schemas/:schema_id",
      ({ principal, params, body }) => replaceCustomSchema(db, clock, principal.orgId, params.schema_id, body),
      {
        permission: "edit",
        params: SchemaParams,
        body: CustomSchemaBody,
        response: { 200: CustomSchemaResource, ...errorResponses([400, 404]) },
        detail: {
          summary: "Replace a custom extraction schema",
          description: "A full replacement: description or prompt_hint left out (or null) are cleared.",
        },
      },
    )
    .delete(
      "/custom-extraction-schemas/:schema_id",
      async ({ principal, params }) => {
        const deleted = await deleteCustomSchema(db, principal.orgId, params.schema_id);
        return { message: `custom extraction schema "${deleted.name}" deleted` };
      },
      {
        permission: "delete",
        params: SchemaParams,
        response: { 200: SchemaDeleted, ...errorResponses([400, 404]) },
        detail: { summary: "Delete a custom extraction schema" },
      },
    );
}
