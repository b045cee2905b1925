/** The watched folders route's response schema (TypeBox). */
import { t } from "elysia";
import { Nullable, Timestamp } from "../http/shapes.ts";

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

export const WatchedFolder = t.Object(
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
