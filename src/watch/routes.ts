/**
 * HTTP binding of GET /watched-folders (Mediabox extension; docs/automation.md): read only.
 * Directories are named by the server's administrator (MEDIABOX_WATCH_DIR, `mediabox watch`).
 */
import { Elysia, t } from "elysia";
import type { IngestDeps } from "../ingest/deps.ts";
import { permissions } from "../http/permissions.ts";
import { Nullable, Timestamp, errorResponses } from "../http/shapes.ts";
import { watchedFoldersOf } from "./watched-folders.ts";

const Item = t.Object({
  id: t.String(),
  rel_path: t.String({ description: "Where the file was, relative to the watched directory" }),
  size_bytes: t.Integer(),
  file_id: t.String({ description: "The file it was stored as (failed items: the id it would have had)" }),
  status: t.String({ description: "ingesting, done or failed" }),
  error: Nullable(t.String()),
  moved_to: Nullable(t.String({ description: "done/... or failed/..., relative to the watched directory" })),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
});

const WatchedFolder = t.Object(
  {
    id: t.String(),
    path: t.String(),
    project_id: t.String(),
    folder_id: Nullable(t.String()),
    origin: t.String({ description: "setting (MEDIABOX_WATCH_DIR) or cli (mediabox watch)" }),
    active: t.Boolean(),
    created_at: Timestamp,
    last_scan_at: Nullable(Timestamp),
    last_error: Nullable(t.String()),
    counts: t.Object({ ingesting: t.Integer(), done: t.Integer(), failed: t.Integer() }),
    recent_items: t.Array(Item),
  },
  { title: "WatchedFolder" },
);

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
