/**
 * `GET /files`: filters, full-text search (FTS5 over title, filename, tags, descriptions and
 * visible text), sorting and paging, always scoped to one organization and to files that are not
 * soft-deleted. Every sort order is backed by a partial index (migration 004).
 */
import type { Database } from "bun:sqlite";
import { badRequest } from "../errors.ts";
import type { FileRow } from "./file-rows.ts";

export const SEARCH_MODES = ["all", "metadata", "visible_text"] as const;
export const SORT_FIELDS = ["created_at", "content_created_at", "title", "size_bytes"] as const;
export const MEDIA_TYPES = ["image", "document", "video", "link"] as const;

export interface ListFilesQuery {
  search: string | null;
  searchMode: (typeof SEARCH_MODES)[number];
  tags: string[];
  mediaTypes: string[];
  ids: string[];
  folderId: string | null;
  projectId: string | null;
  hasDescription: boolean | null;
  complianceStatus: string | null;
  dateFrom: string | null;
  dateTo: string | null;
  /** null: relevance when searching, else created_at. */
  sortBy: (typeof SORT_FIELDS)[number] | null;
  sortOrder: "asc" | "desc";
  limit: number;
  offset: number;
}

const FTS_COLUMNS: Record<ListFilesQuery["searchMode"], string | null> = {
  all: null,
  metadata: "{title filename tags user_description upload_description}",
  visible_text: "{visible_text}",
};

/**
 * Turns free text into a safe FTS5 query: every word must match (AND), words that the tokenizer
 * splits (INV-2024-001) become phrases, and the last word also matches as a prefix so results
 * follow typing. No FTS syntax from the user reaches SQLite.
 */
export function ftsQuery(search: string, mode: ListFilesQuery["searchMode"]): string {
  const words = search.split(/\s+/).filter(Boolean);
  const terms: string[] = [];
  for (const word of words) {
    const tokens = word.match(/[\p{L}\p{N}]+/gu);
    if (tokens) terms.push(`"${tokens.join(" ")}"`);
  }
  if (terms.length === 0) throw badRequest("search: must contain at least one letter or digit");
  terms[terms.length - 1] += "*";
  const expression = terms.join(" AND ");
  const columns = FTS_COLUMNS[mode];
  return columns ? `${columns} : (${expression})` : expression;
}

function isoOrThrow(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badRequest(`${field}: must be an ISO 8601 timestamp`);
  return new Date(ms).toISOString();
}

export function listFiles(db: Database, orgId: string, q: ListFilesQuery): { rows: FileRow[]; total: number } {
  const where: string[] = ["f.org_id = ?", "f.deleted_at IS NULL"];
  const params: (string | number)[] = [orgId];
  let from = "files f";
  const fromParams: string[] = [];

  if (q.search !== null) {
    from = "files_fts JOIN files f ON f.search_rowid = files_fts.rowid";
    where.unshift("files_fts MATCH ?");
    fromParams.push(ftsQuery(q.search, q.searchMode));
  }
  if (q.tags.length) {
    const keys = [...new Set(q.tags.map((t) => t.trim().toLowerCase()))];
    where.push(
      `f.id IN (SELECT file_id FROM file_tags WHERE org_id = ? AND tag_key IN (${keys.map(() => "?").join(",")}) GROUP BY file_id HAVING count(*) = ?)`,
    );
    params.push(orgId, ...keys, keys.length);
  }
  if (q.mediaTypes.length) {
    where.push(`f.media_type IN (${q.mediaTypes.map(() => "?").join(",")})`);
    params.push(...q.mediaTypes);
  }
  if (q.ids.length) {
    where.push(`f.id IN (${q.ids.map(() => "?").join(",")})`);
    params.push(...q.ids.map((id) => id.toLowerCase()));
  }
  if (q.folderId) {
    where.push("f.folder_id = ?");
    params.push(q.folderId);
  }
  if (q.projectId) {
    where.push("f.project_id = ?");
    params.push(q.projectId);
  }
  if (q.hasDescription !== null) {
    where.push(q.hasDescription ? "(f.user_description IS NOT NULL OR f.upload_description IS NOT NULL)" : "(f.user_description IS NULL AND f.upload_description IS NULL)");
  }
  if (q.complianceStatus) {
    where.push("f.compliance_status = ?");
    params.push(q.complianceStatus);
  }
  if (q.dateFrom) {
    where.push("f.created_at >= ?");
    params.push(isoOrThrow(q.dateFrom, "date_from"));
  }
  if (q.dateTo) {
    where.push("f.created_at <= ?");
    params.push(isoOrThrow(q.dateTo, "date_to"));
  }

  const dir = q.sortOrder === "asc" ? "ASC" : "DESC";
  let order: string;
  if (q.sortBy === null && q.search !== null) {
    // Title and filename hits weigh more than a word somewhere in the visible text.
    order = "bm25(files_fts, 8.0, 6.0, 4.0, 2.0, 2.0, 1.0), f.created_at DESC, f.id DESC";
  } else {
    const sortBy = q.sortBy ?? "created_at";
    const column = sortBy === "title" ? "coalesce(f.title, f.filename) COLLATE NOCASE" : `f.${sortBy}`;
    order = `${column} ${dir}, f.id ${dir}`;
  }

  const whereSql = where.join(" AND ");
  const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM ${from} WHERE ${whereSql}`).get(...fromParams, ...params)!.n;
  const rows = db
    .query<FileRow, (string | number)[]>(`SELECT f.* FROM ${from} WHERE ${whereSql} ORDER BY ${order} LIMIT ? OFFSET ?`)
    .all(...fromParams, ...params, q.limit, q.offset);
  return { rows, total };
}
