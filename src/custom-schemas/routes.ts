/** HTTP binding of /custom-extraction-schemas (spec section "Custom extraction schemas"); the schemas are model.ts's. */
import { Elysia } from "elysia";
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";
import { permissions } from "../http/permissions.ts";
import { Page, page, errorResponses } from "../http/shapes.ts";
import { createCustomSchema, deleteCustomSchema, getCustomSchema, listCustomSchemas, replaceCustomSchema } from "./custom-schemas.ts";
import { CustomSchemaBody, CustomSchemaResource, CustomSchemasQuery, CustomSchemaSummary, SchemaDeleted, SchemaParams } from "./model.ts";

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
        body: CustomSchemaBody,
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
      ({ principal, params }) => {
        const deleted = deleteCustomSchema(db, principal.orgId, params.schema_id);
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
