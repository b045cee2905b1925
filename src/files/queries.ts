/**
 * The reads of the files row for listings and search: `GET /files`'s filters (shared with the
 * photo timeline and the map), full-text search (FTS5 over title, filename, tags, descriptions and
 * visible text), sorting and paging, always scoped to one organization and to files that are not
 * soft-deleted. Every sort order is backed by a partial index (migration 004). Also the trash
 * (`GET /files/deleted`): the organization's soft-deleted files still within retention. Filters on
 * a kind's facts ask its table (image_compliance, camera_facts) with EXISTS.
 */
import type { Database } from "bun:sqlite";
import { STOP_WORDS } from "../text/stop-words.ts";
import { badRequest } from "../errors.ts";
import type { FileRow } from "../files/file.ts";

export const SEARCH_MODES = ["all", "metadata", "visible_text"] as const;
export const SORT_FIELDS = ["created_at", "content_created_at", "title", "size_bytes"] as const;
export const PROCESSING_STATUSES = ["queued", "processing", "stored", "completed", "failed"] as const;

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
  /** Extension: the file's processing as a whole (the Activity page's failed files). */
  processingStatus: (typeof PROCESSING_STATUSES)[number] | null;
  dateFrom: string | null;
  dateTo: string | null;
  /** Extension: on content_created_at (when it was taken), inclusive. */
  takenFrom: string | null;
  takenTo: string | null;
  /** Extension: a substring of the camera's "make model", case-insensitive. */
  camera: string | null;
  /** Extension: whether the file records where it was taken. */
  hasLocation: boolean | null;
  /** Extension: taken within [west, south, east, north] degrees (west > east crosses the antimeridian). */
  bbox: BoundingBox | null;
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
  for (const [i, word] of words.entries()) {
    const tokens = word.match(/[\p{L}\p{N}]+/gu);
    // Stop words need not occur ("the annual report" finds "Annual report 2024"), except the last
    // word, which may be the start of a longer one, and a query of nothing else.
    const stop = i < words.length - 1 && tokens?.length === 1 && STOP_WORDS.has(tokens[0]!.toLowerCase());
    if (tokens && !stop) terms.push(`"${tokens.join(" ")}"`);
  }
  if (terms.length === 0) {
    for (const word of words) {
      const tokens = word.match(/[\p{L}\p{N}]+/gu);
      if (tokens) terms.push(`"${tokens.join(" ")}"`);
    }
  }
  if (terms.length === 0) throw badRequest("search: must contain at least one letter or digit");
  terms[terms.length - 1] += "*";
  const expression = terms.join(" AND ");
  const columns = FTS_COLUMNS[mode];
  return columns ? `${columns} : (${expression})` : expression;
}

export interface BoundingBox {
  west: number;
  south: number;
  east: number;
  north: number;
}

/** "west,south,east,north" in degrees (GeoJSON's bbox order), or a 400 naming what is wrong. */
export function parseBoundingBox(value: string, field = "bbox"): BoundingBox {
  const parts = value.split(",").map((part) => part.trim());
  const numbers = parts.map(Number);
  if (parts.length !== 4 || parts.some((part) => part === "") || numbers.some((n) => !Number.isFinite(n))) {
    throw badRequest(`${field}: must be four numbers west,south,east,north (degrees)`);
  }
  const [west, south, east, north] = numbers as [number, number, number, number];
  if ([west, east].some((lon) => lon < -180 || lon > 180)) throw badRequest(`${field}: longitudes must be within -180..180`);
  if ([south, north].some((lat) => lat < -90 || lat > 90)) throw badRequest(`${field}: latitudes must be within -90..90`);
  if (south > north) throw badRequest(`${field}: south must not be greater than north`);
  return { west, south, east, north };
}

/** SQL over camera_facts `c` for points within the box (a box with west > east crosses the antimeridian). */
export function boxCondition(box: BoundingBox): { sql: string; params: number[] } {
  const lon = box.west <= box.east ? "c.longitude BETWEEN ? AND ?" : "(c.longitude >= ? OR c.longitude <= ?)";
  return { sql: `c.latitude BETWEEN ? AND ? AND ${lon}`, params: [box.south, box.north, box.west, box.east] };
}

const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A date, or a date and time (T or a space) with an optional zone; four-digit years only. */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The filter's instant as stored timestamps are written. Date.parse alone takes what no client
 * means ("1" is 2001, "2024-02-30" is 1 March, "+275760-09-13" compares wrongly as text): those are 400s.
 */
function isoOrThrow(value: string, field: string): string {
  const match = ISO_8601.exec(value.trim());
  const ms = match ? Date.parse(value.trim()) : Number.NaN;
  const day = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!day || Number.isNaN(ms) || day.getUTCMonth() !== Number(match![2]) - 1 || day.getUTCDate() !== Number(match![3])) {
    throw badRequest(`${field}: must be an ISO 8601 timestamp (YYYY-MM-DD, or YYYY-MM-DDThh:mm[:ss][Z|±hh:mm]) of a day that exists`);
  }
  return new Date(ms).toISOString();
}

/** The filters of GET /files that are conditions on the file itself (no search, no tags); the timeline and the map take them too. */
export type FileFilters = Omit<ListFilesQuery, "search" | "searchMode" | "tags" | "sortBy" | "sortOrder" | "limit" | "offset">;

export const NO_FILTERS: FileFilters = {
  mediaTypes: [],
  ids: [],
  folderId: null,
  projectId: null,
  hasDescription: null,
  complianceStatus: null,
  processingStatus: null,
  dateFrom: null,
  dateTo: null,
  takenFrom: null,
  takenTo: null,
  camera: null,
  hasLocation: null,
  bbox: null,
};

/** SQL conditions on `files f` (beyond "this org, not deleted") for the filters, with their parameters. */
export function fileConditions(q: FileFilters): { filters: string[]; params: (string | number)[] } {
  const filters: string[] = [];
  const params: (string | number)[] = [];
  if (q.mediaTypes.length) {
    filters.push(`f.media_type IN (${q.mediaTypes.map(() => "?").join(",")})`);
    params.push(...q.mediaTypes);
  }
  if (q.ids.length) {
    filters.push(`f.id IN (${q.ids.map(() => "?").join(",")})`);
    params.push(...q.ids.map((id) => id.toLowerCase()));
  }
  if (q.folderId) {
    filters.push("f.folder_id = ?");
    params.push(q.folderId);
  }
  if (q.projectId) {
    filters.push("f.project_id = ?");
    params.push(q.projectId);
  }
  if (q.hasDescription !== null) {
    filters.push(q.hasDescription ? "(f.user_description IS NOT NULL OR f.upload_description IS NOT NULL)" : "(f.user_description IS NULL AND f.upload_description IS NULL)");
  }
  if (q.complianceStatus) {
    filters.push("EXISTS (SELECT 1 FROM image_compliance c WHERE c.file_id = f.id AND c.status = ?)");
    params.push(q.complianceStatus);
  }
  if (q.processingStatus) {
    filters.push("f.processing_status = ?");
    params.push(q.processingStatus);
  }
  if (q.dateFrom) {
    filters.push("f.created_at >= ?");
    params.push(isoOrThrow(q.dateFrom, "date_from"));
  }
  if (q.dateTo) {
    filters.push("f.created_at <= ?");
    params.push(isoOrThrow(q.dateTo, "date_to"));
  }
  if (q.takenFrom) {
    filters.push("f.content_created_at >= ?");
    params.push(isoOrThrow(q.takenFrom, "taken_from"));
  }
  if (q.takenTo) {
    filters.push("f.content_created_at <= ?");
    params.push(isoOrThrow(q.takenTo, "taken_to"));
  }
  if (q.camera) {
    filters.push("EXISTS (SELECT 1 FROM camera_facts c WHERE c.file_id = f.id AND (coalesce(c.make, '') || ' ' || coalesce(c.model, '')) LIKE ? ESCAPE '\\')");
    params.push(`%${likeEscape(q.camera)}%`);
  }
  if (q.hasLocation !== null) {
    filters.push(`${q.hasLocation ? "" : "NOT "}EXISTS (SELECT 1 FROM camera_facts c WHERE c.file_id = f.id AND c.latitude IS NOT NULL)`);
  }
  if (q.bbox) {
    const box = boxCondition(q.bbox);
    filters.push(`EXISTS (SELECT 1 FROM camera_facts c WHERE c.file_id = f.id AND ${box.sql})`);
    params.push(...box.params);
  }
  return { filters, params };
}

export function listFiles(db: Database, orgId: string, q: ListFilesQuery): { rows: FileRow[]; total: number } {
  // Conditions on the file itself, beyond "this org, not deleted".
  const { filters, params } = fileConditions(q);
  // A search joins the FTS table (its rank orders the results unless sort_by says otherwise).
  const search = q.search !== null ? ftsQuery(q.search, q.searchMode) : null;
  const fts = search !== null ? " JOIN files_fts ON files_fts.rowid = f.search_rowid" : "";
  if (search !== null) {
    filters.unshift("files_fts MATCH ?");
    params.unshift(search);
  }
  const order = orderBy(q, search !== null);
  const tagKeys = [...new Set(q.tags.map((t) => t.trim().toLowerCase()))];

  if (tagKeys.length === 0) {
    const where = ["f.org_id = ?", "f.deleted_at IS NULL", ...filters].join(" AND ");
    const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM files f${fts} WHERE ${where}`).get(orgId, ...params)!.n;
    const rows = db
      .query<FileRow, (string | number)[]>(`SELECT f.* FROM files f${fts} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(orgId, ...params, q.limit, q.offset);
    return { rows, total };
  }

  // With tags, counting walks the tag index (already org-scoped) and probes each candidate by
  // id through the live-files index: CROSS JOIN and INDEXED BY pin that plan, which SQLite
  // would otherwise trade for a table lookup per candidate (4x slower at 20,000 matches).
  const tagged = `SELECT file_id FROM file_tags WHERE org_id = ? AND tag_key IN (${tagKeys.map(() => "?").join(",")}) GROUP BY file_id HAVING count(*) = ?`;
  const tagParams = [orgId, ...tagKeys, tagKeys.length];
  const byTags = `(${tagged}) tagged CROSS JOIN files f INDEXED BY files_live_ids${fts}`;
  const taggedWhere = ["f.id = tagged.file_id", "f.deleted_at IS NULL", ...filters].join(" AND ");
  const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM ${byTags} WHERE ${taggedWhere}`).get(...tagParams, ...params)!.n;
  if (total === 0 || q.offset >= total) return { rows: [], total };
  if (total <= RARE_TAG_MATCHES) {
    // Few matches: sorting them beats walking the sort index looking for them.
    const rows = db
      .query<FileRow, (string | number)[]>(`SELECT f.* FROM ${byTags} WHERE ${taggedWhere} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(...tagParams, ...params, q.limit, q.offset);
    return { rows, total };
  }
  // Many matches: read in sort order and probe the tags per row; the page fills quickly.
  const probes = tagKeys.map(() => "EXISTS (SELECT 1 FROM file_tags t WHERE t.org_id = f.org_id AND t.tag_key = ? AND t.file_id = f.id)");
  const where = ["f.org_id = ?", "f.deleted_at IS NULL", ...filters, ...probes].join(" AND ");
  const rows = db
    .query<FileRow, (string | number)[]>(`SELECT f.* FROM files f${fts} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`)
    .all(orgId, ...params, ...tagKeys, q.limit, q.offset);
  return { rows, total };
}

/**
 * The trash: the organization's soft-deleted files deleted after `cutoff` (older ones are past
 * retention: purged, or about to be, and no longer restorable), newest deletion first. The
 * deleted-files index (migration 004) serves the range and the order; it holds only the
 * retention window's deletions (of every organization), so checking the org per row is cheap.
 */
export function listDeletedFiles(db: Database, orgId: string, cutoff: string, limit: number, offset: number): { rows: FileRow[]; total: number } {
  const where = "f.org_id = ? AND f.deleted_at IS NOT NULL AND f.deleted_at > ?";
  const total = db.query<{ n: number }, [string, string]>(`SELECT count(*) AS n FROM files f WHERE ${where}`).get(orgId, cutoff)!.n;
  const rows = db
    .query<FileRow, [string, string, number, number]>(`SELECT f.* FROM files f WHERE ${where} ORDER BY f.deleted_at DESC, f.id DESC LIMIT ? OFFSET ?`)
    .all(orgId, cutoff, limit, offset);
  return { rows, total };
}

/** Up to this many tag matches, a page is built by sorting the matches. */
export const RARE_TAG_MATCHES = 2_000;

function orderBy(q: ListFilesQuery, searching: boolean): string {
  const dir = q.sortOrder === "asc" ? "ASC" : "DESC";
  if (q.sortBy === null && searching) {
    // Title and filename hits weigh more than a word somewhere in the visible text.
    return "bm25(files_fts, 8.0, 6.0, 4.0, 2.0, 2.0, 1.0), f.created_at DESC, f.id DESC";
  }
  const sortBy = q.sortBy ?? "created_at";
  const column = sortBy === "title" ? "coalesce(f.title, f.filename) COLLATE NOCASE" : `f.${sortBy}`;
  return `${column} ${dir}, f.id ${dir}`;
}
