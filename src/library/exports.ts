/**
 * Exports of file metadata: the column registry (`GET /files/export/columns`) and the CSV, XLSX
 * and DOCX writers behind `POST /files/export`. The generated file is stored in the blob store,
 * handed out as a signed download URL, and deleted by a scheduled job once that URL has expired
 * (nothing else can reach it). `hosted_sheets` writes the spreadsheet to a cloud connection
 * instead (a Google Sheet, or an .xlsx in Nextcloud) and answers its `spreadsheet_url`.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { stringify } from "csv-stringify/sync";
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun, WidthType } from "docx";
import type { LibraryDeps } from "./deps.ts";
import { ApiError, badRequest } from "../errors.ts";
import { getFolder } from "../folders/folders.ts";
import type { QueueDefinition } from "../jobs/runner.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import { cameraFactsOfFiles, type StoredCameraFacts } from "../camera/camera-facts.ts";
import type { ExportCell, MediaKinds } from "../kinds/media-kind.ts";
import { complianceOfFiles, type ImageCompliance } from "../compliance/image-compliance.ts";
import { imageFactsOfFiles, type StoredImageFacts } from "../images/image-facts.ts";
import { documentFactsOfFiles, type DocumentFacts } from "../documents/document-facts.ts";

export const EXPORT_FORMATS = ["csv", "xlsx", "docx", "hosted_sheets"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Rows per export; larger libraries are exported by folder or by ids. */
export const MAX_EXPORT_ROWS = 100_000;
const DOWNLOAD_SECONDS = 3600;
/** Lets a download that started just before the URL expired finish before its bytes go. */
const EXPIRY_MARGIN_SECONDS = 600;

type Cell = ExportCell;

interface ColumnDef {
  key: string;
  display: string;
  /** basic, descriptions, camera, or the media type whose column it is. */
  group: string;
  value(row: FileRow, options: ValueOptions): Cell;
}

interface ValueOptions {
  flattenTags: boolean;
  /** A kind's own column's cell (KindExports.read). */
  kindCell(type: string, row: FileRow, key: string): Cell;
  extractedText(fileId: string): string | null;
  camera(fileId: string): StoredCameraFacts | null;
  compliance(fileId: string): string | null;
  image(fileId: string): StoredImageFacts;
  document(fileId: string): DocumentFacts;
}

const col = (group: ColumnDef["group"], key: string, display: string, value: ColumnDef["value"]): ColumnDef => ({ key, display, group, value });
const field = (group: ColumnDef["group"], key: keyof FileRow, display: string) => col(group, key, display, (row) => row[key] as Cell);
const camera = (key: string, display: string, fact: keyof StoredCameraFacts) => col("camera", key, display, (row, o) => (o.camera(row.id)?.[fact] ?? null) as Cell);

export const EXPORT_COLUMNS: ColumnDef[] = [
  field("basic", "id", "ID"),
  field("basic", "filename", "File name"),
  field("basic", "title", "Title"),
  field("basic", "media_type", "Media type"),
  field("basic", "content_type", "Content type"),
  field("basic", "size_bytes", "Size (bytes)"),
  col("basic", "tags", "Tags", (row, o) => (o.flattenTags ? tagsOf(row).join(", ") : JSON.stringify(tagsOf(row)))),
  field("basic", "content_category", "Content category"),
  field("basic", "created_at", "Created at"),
  field("basic", "updated_at", "Updated at"),
  field("basic", "content_created_at", "Content created at"),
  field("basic", "project_id", "Project ID"),
  field("basic", "folder_id", "Folder ID"),
  field("basic", "sha256", "SHA-256"),
  col("descriptions", "description", "Description", (row) => row.user_description ?? row.upload_description),
  field("descriptions", "user_description", "User description"),
  field("descriptions", "upload_description", "AI description"),
  field("descriptions", "visible_text", "Visible text"),
  field("image", "width", "Width"),
  field("image", "height", "Height"),
  field("image", "format", "Format"),
  col("image", "blur_hash", "BlurHash", (row, o) => o.image(row.id).blurHash),
  col("image", "variant_status", "Variant status", (row, o) => o.image(row.id).variantStatus),
  field("image", "description_status", "Description status"),
  col("image", "compliance_status", "Compliance status", (row, o) => o.compliance(row.id)),
  field("document", "document_type", "Document type"),
  col("document", "page_count", "Pages", (row, o) => o.document(row.id).pageCount),
  col("document", "chunk_count", "Chunks", (row, o) => o.document(row.id).chunkCount),
  col("document", "text_extraction_status", "Text extraction status", (row, o) => o.document(row.id).textExtractionStatus),
  col("document", "extracted_text", "Extracted text", (row, o) => o.extractedText(row.id)),
  field("link", "source_url", "Source URL"),
  camera("camera_make", "Camera make", "make"),
  camera("camera_model", "Camera model", "model"),
  camera("lens", "Lens", "lens"),
  camera("focal_length_mm", "Focal length (mm)", "focalLengthMm"),
  camera("f_number", "Aperture (f-number)", "fNumber"),
  camera("exposure_time_seconds", "Exposure time (s)", "exposureSeconds"),
  camera("iso", "ISO", "iso"),
  camera("taken_at_offset", "Taken at UTC offset", "takenAtOffset"),
  camera("latitude", "Latitude", "latitude"),
  camera("longitude", "Longitude", "longitude"),
  camera("altitude_m", "Altitude (m)", "altitudeM"),
  camera("country", "Country", "country"),
  camera("region", "Region", "region"),
  camera("city", "City", "city"),
];

/**
 * The columns in their groups: basic and descriptions, then each registered kind's (the ones
 * above under its type, then its descriptor's, MediaKind.exportColumns, filled for its own files
 * only), then camera.
 */
function exportColumns(kinds: MediaKinds): ColumnDef[] {
  const common = (group: string) => EXPORT_COLUMNS.filter((c) => c.group === group);
  const ofKinds = kinds.all().flatMap((kind) => [
    ...common(kind.type),
    ...(kind.exports?.columns ?? []).map((c) => col(kind.type, c.key, c.display, (row, o) => (row.media_type === kind.type ? o.kindCell(kind.type, row, c.key) : null))),
  ]);
  return [...common("basic"), ...common("descriptions"), ...ofKinds, ...common("camera")];
}

export function exportColumnGroups(kinds: MediaKinds) {
  const groups: Record<string, { field_key: string; display_name: string; group: string }[]> = {};
  for (const c of exportColumns(kinds)) (groups[c.group] ??= []).push({ field_key: c.key, display_name: c.display, group: c.group });
  return { groups };
}

export interface ExportRequest {
  format: ExportFormat;
  columns: { field_key: string; display_name?: string | null }[];
  file_ids?: string[];
  folder_id?: string | null;
  include_subfolders?: boolean;
  flatten_tags?: boolean;
  sheet_name?: string | null;
  /** hosted_sheets: the spreadsheet's name in the drive. */
  title?: string | null;
  /** hosted_sheets: the cloud connection to write to. */
  connection_id?: string | null;
}

/**
 * Spreadsheet apps run cells that start with = + - @ (or a tab / carriage return) as formulas;
 * a leading apostrophe keeps them text (OWASP's CSV injection advice).
 */
export function neutralizeFormula(value: Cell): Cell {
  return typeof value === "string" && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/**
 * The live files an export covers, oldest first (at most MAX_EXPORT_ROWS + 1, so a larger
 * selection is noticed), on either database. `folderId`: request.folder_id once found in the
 * organization.
 */
export function exportRows(sql: SqlClient, orgId: string, request: Pick<ExportRequest, "file_ids" | "include_subfolders">, folderId: string | null): Promise<FileRow[]> {
  if (request.file_ids?.length) {
    // The ids bound as one JSON array: no limit on their number from the engine's parameters.
    const ids = [...new Set(request.file_ids.map((id) => id.toLowerCase()))];
    return sql.all<FileRow>(`SELECT * FROM files WHERE org_id = ? AND deleted_at IS NULL AND id IN (${sql.dialect.jsonValues}) ORDER BY created_at, id`, [orgId, JSON.stringify(ids)]);
  }
  if (folderId && request.include_subfolders) {
    return sql.all<FileRow>(
      `WITH RECURSIVE tree(id) AS (SELECT CAST(? AS TEXT) UNION ALL SELECT f.id FROM folders f JOIN tree ON f.parent_id = tree.id WHERE f.org_id = ?)
       SELECT * FROM files WHERE org_id = ? AND deleted_at IS NULL AND folder_id IN (SELECT id FROM tree) ORDER BY created_at, id LIMIT ?`,
      [folderId, orgId, orgId, MAX_EXPORT_ROWS + 1],
    );
  }
  if (folderId) {
    return sql.all<FileRow>("SELECT * FROM files WHERE org_id = ? AND deleted_at IS NULL AND folder_id = ? ORDER BY created_at, id LIMIT ?", [orgId, folderId, MAX_EXPORT_ROWS + 1]);
  }
  return sql.all<FileRow>("SELECT * FROM files WHERE org_id = ? AND deleted_at IS NULL ORDER BY created_at, id LIMIT ?", [orgId, MAX_EXPORT_ROWS + 1]);
}

const SHEET_NAME_FORBIDDEN = /[[\]:*?/\\]/;

function checkRequest(kinds: MediaKinds, request: ExportRequest): ColumnDef[] {
  if (request.format === "hosted_sheets" && !request.connection_id) {
    throw badRequest("connection_id: required for the hosted_sheets format (a cloud storage connection to write the spreadsheet to)");
  }
  if (!request.columns.length) throw badRequest("columns: at least one column is required");
  const byKey = new Map(exportColumns(kinds).map((c) => [c.key, c]));
  const columns = request.columns.map((c) => {
    const def = byKey.get(c.field_key);
    if (!def) throw badRequest(`columns: unknown field_key "${c.field_key}"; see GET /files/export/columns`);
    return { ...def, display: c.display_name?.trim() || def.display };
  });
  const sheet = request.sheet_name;
  if (sheet !== undefined && sheet !== null && (sheet.trim().length === 0 || sheet.length > 31 || SHEET_NAME_FORBIDDEN.test(sheet))) {
    throw badRequest("sheet_name: 1-31 characters without [ ] : * ? / \\");
  }
  return columns;
}

async function render(format: "csv" | "xlsx" | "docx", header: string[], body: Cell[][], sheetName: string): Promise<Uint8Array> {
  if (format === "csv") {
    // A BOM lets spreadsheet apps read UTF-8 names correctly.
    return new TextEncoder().encode("\ufeff" + stringify([header, ...body].map((r) => r.map(neutralizeFormula))));
  }
  if (format === "xlsx") {
    // Loaded on first use: importing exceljs takes ~0.6 s, which every server start (and CLI command) paid.
    const { default: ExcelJS } = await import("exceljs");
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet(sheetName);
    sheet.addRow(header).font = { bold: true };
    // Cells are written as values, never formulas; neutralizing still protects re-exports to CSV.
    for (const row of body) sheet.addRow(row.map(neutralizeFormula));
    return new Uint8Array(await workbook.xlsx.writeBuffer());
  }
  const cell = (text: string, bold = false) =>
    new TableCell({ children: [new Paragraph({ children: [new TextRun({ text, bold })] })] });
  const table = new Table({
    width: { size: 100, type: WidthType.PERCENTAGE },
    rows: [
      new TableRow({ tableHeader: true, children: header.map((h) => cell(h, true)) }),
      ...body.map((row) => new TableRow({ children: row.map((v) => cell(v === null ? "" : String(v))) })),
    ],
  });
  const doc = new Document({
    sections: [{ children: [new Paragraph({ text: sheetName, heading: HeadingLevel.HEADING_1 }), table] }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

const CONTENT_TYPES = {
  csv: "text/csv; charset=utf-8",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
} as const;

export async function exportFiles(ctx: LibraryDeps, orgId: string, request: ExportRequest, origin: string) {
  const columns = checkRequest(ctx.kinds, request);
  // Checked before the rows are read: another organization's connection is 404 at once.
  const connection = request.format === "hosted_sheets" ? await ctx.cloud.connection(orgId, request.connection_id!) : null;
  const folder = request.file_ids?.length || !request.folder_id ? null : await getFolder(ctx.sql, orgId, request.folder_id);
  const rows = await exportRows(ctx.sql, orgId, request, folder?.id ?? null);
  if (rows.length > MAX_EXPORT_ROWS) throw badRequest(`the selection has more than ${MAX_EXPORT_ROWS} files; export by folder_id or file_ids`);
  // What the chosen columns show beyond the rows is read before the cells, which are computed
  // synchronously: each table once for the whole selection, and only when a column asks for it.
  const ids = rows.map((row) => row.id);
  const wants = (...keys: string[]) => columns.some((c) => keys.includes(c.key));
  const texts = new Map<string, string | null>();
  if (wants("extracted_text")) for (const row of rows) texts.set(row.id, await ctx.files.extractedText(row.id));
  const cameras = columns.some((c) => c.group === "camera") ? await cameraFactsOfFiles(ctx.sql, ids) : new Map<string, StoredCameraFacts>();
  const compliance = wants("compliance_status") ? await complianceOfFiles(ctx.sql, ids) : new Map<string, ImageCompliance>();
  const images = wants("blur_hash", "variant_status") ? await imageFactsOfFiles(ctx.sql, ids) : new Map<string, StoredImageFacts>();
  const documents = wants("page_count", "chunk_count", "text_extraction_status") ? await documentFactsOfFiles(ctx.sql, ids) : new Map<string, DocumentFacts>();
  const kindCells = new Map<string, (row: FileRow, key: string) => Cell>();
  for (const kind of ctx.kinds.all()) {
    if (!kind.exports || !columns.some((c) => c.group === kind.type && kind.exports!.columns.some((k) => k.key === c.key))) continue;
    kindCells.set(kind.type, await kind.exports.read(rows.filter((row) => row.media_type === kind.type)));
  }
  const options: ValueOptions = {
    flattenTags: request.flatten_tags ?? true,
    kindCell: (type, row, key) => kindCells.get(type)!(row, key),
    extractedText: (id) => texts.get(id) ?? null,
    camera: (id) => cameras.get(id) ?? null,
    compliance: (id) => compliance.get(id)?.status ?? null,
    image: (id) => images.get(id)!,
    document: (id) => documents.get(id)!,
  };
  const header = columns.map((c) => c.display);
  const body = rows.map((row) => columns.map((c) => c.value(row, options)));
  const sheetName = request.sheet_name?.trim() || "Files";
  if (connection) {
    const stamp = new Date(ctx.clock.now()).toISOString().slice(0, 16).replace("T", " ");
    const title = request.title?.trim() || `Mediabox export ${stamp}`;
    const [csv, xlsx] = await Promise.all([render("csv", header, body, sheetName), render("xlsx", header, body, sheetName)]);
    const hosted = await ctx.cloud.call(connection, (access, provider) => {
      if (!provider.hostSpreadsheet) throw new ApiError("CLOUD_NOT_SUPPORTED", `the ${provider.name} provider cannot host spreadsheets`);
      return provider.hostSpreadsheet(access, { title, csv, xlsx });
    });
    return { download_url: null, spreadsheet_url: hosted.url, record_count: rows.length, format: request.format };
  }
  const format = request.format as "csv" | "xlsx" | "docx";
  const bytes = await render(format, header, body, sheetName);

  const exportId = crypto.randomUUID();
  const key = `orgs/${orgId}/exports/${exportId}.${format}`;
  // Scheduled before the bytes exist, so a crash in between can leave nothing behind.
  await ctx.jobs.submit({
    queue: "export.expire",
    orgId,
    payload: { key },
    runAt: ctx.clock.now() + (DOWNLOAD_SECONDS + EXPIRY_MARGIN_SECONDS) * 1000,
  });
  await ctx.blobs.put(key, bytes, CONTENT_TYPES[format]);
  const stamp = new Date(ctx.clock.now()).toISOString().slice(0, 10);
  const downloadUrl = await ctx.blobs.presignGet(
    key,
    { expiresInSeconds: DOWNLOAD_SECONDS, downloadName: `mediabox-export-${stamp}.${format}`, contentType: CONTENT_TYPES[format] },
    origin,
  );
  return { download_url: downloadUrl, spreadsheet_url: null, record_count: rows.length, format };
}

/** Deletes an export's file after its download URL has expired. */
export function exportExpiryQueue(ctx: LibraryDeps): QueueDefinition<"export.expire"> {
  return {
    name: "export.expire",
    concurrency: 1,
    async handler(job) {
      await ctx.blobs.delete(job.payload.key);
      return [{ deleted: job.payload.key }];
    },
  };
}
