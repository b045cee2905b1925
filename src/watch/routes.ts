/**
 * HTTP binding of GET /watched-folders (Mediabox extension; docs/automation.md): read only.
 * Directories are named by the server's administrator (MEDIABOX_WATCH_DIR, `mediabox watch`).
 */
import { Elysia, t } from "elysia";
import type { IngestDeps } from "../ingest/deps.ts";
import { permissions } from "../http/permissions.ts";
import { errorResponses } from "../http/shapes.ts";
import { WatchedFolder } from "./model.ts";
import { watchedFoldersOf } from "./watched-folders.ts";

export function watchRoutes(ctx: IngestDeps) {
  return new Elysia({ tags: ["Automation"] }).use(permissions).get(
    "/watched-folders",
    async ({ principal, query }) => ({ items: await watchedFoldersOf(ctx.sql, principal.orgId, query.recent ?? 20) }),
    {
      permission: "view",
      query: t.Object({ recent: t.Optional(t.Integer({ minimum: 0, maximum: 200, error: "recent must be an integer from 0 to 200" })) }),
      response: { 200: t.Object({ items: t.Array(WatchedFolder) }), ...errorResponses([400]) },
      detail: { summary: "The organization's watched folders and their latest files (extension)" },
    },
  );
}
