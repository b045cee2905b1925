/**
 * Media types are the registered kinds' (src/kinds/), so the files row no longer lists them in a
 * CHECK: a kind added to the registry stores its files without a migration of its own.
 */
import type { Database } from "bun:sqlite";
import { rebuildTable } from "../table-rebuild.ts";

const MEDIA_TYPE_CHECK = /media_type TEXT NOT NULL CHECK \(media_type IN \([^)]*\)\)/;

export default function openMediaTypes(db: Database): void {
  rebuildTable(db, "files", {
    create(current) {
      if (!MEDIA_TYPE_CHECK.test(current)) throw new Error("files.media_type has no CHECK of the expected form");
      return current.replace(MEDIA_TYPE_CHECK, "media_type TEXT NOT NULL");
    },
  });
}
