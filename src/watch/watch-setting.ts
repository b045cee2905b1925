/**
 * MEDIABOX_WATCH_DIR's syntax: `DIR=ORGANIZATION[/PROJECT[/FOLDER/…]]`, several separated by `;`
 * or new lines (names cannot hold "/", so the first "=" ends the directory). Parsed with the
 * other settings; the names are resolved against the database when the server starts.
 */
import { resolve } from "node:path";

/** A mapping as written in MEDIABOX_WATCH_DIR or given to `mediabox watch`. */
export interface WatchMapping {
  path: string;
  org: string;
  project: string | null;
  /** Folder names from the project's top level ("Inbox/Scans"), or null. */
  folder: string | null;
}

export class WatchSettingError extends Error {
  override name = "WatchSettingError";
}

/** `/srv/scans=Acme/Paperwork/Inbox; /srv/mail=Acme` → mappings (the directory up to the first `=`). */
export function parseWatchSetting(raw: string): WatchMapping[] {
  return raw
    .split(/[;\n]/)
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf("=");
      if (eq <= 0) throw new WatchSettingError(`"${entry}": expected DIR=ORGANIZATION[/PROJECT[/FOLDER…]]`);
      const [org = "", project, ...folders] = entry.slice(eq + 1).split("/").map((s) => s.trim());
      if (!org) throw new WatchSettingError(`"${entry}": the organization is missing after "="`);
      return { path: resolve(entry.slice(0, eq).trim()), org, project: project || null, folder: folders.filter(Boolean).join("/") || null };
    });
}

