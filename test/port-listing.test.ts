/**
 * The library's listing reads on the data-access port (docs/scale-out.md) behave the same on
 * SQLite and on PostgreSQL: GET /files's filters, every sort order with paging, keyword search in
 * its three modes (every word, the last as a prefix, words the tokenizer splits as phrases, stems
 * and folded diacritics as FTS5 makes them, relevance first), organization scoping, deleted files
 * left out of the listing and shown in the trash, the timeline's buckets and the map's clusters.
 * Each answer is checked against what the fixture says it must be, and the two engines' answers
 * against each other. The HTTP sides are tested in library, trash, camera-facts and dashboard
 * tests. The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import type { SqlClient } from "../src/db/sql-client.ts";
import { listDeletedFiles, listFiles, NO_FILTERS, type FileFilters, type ListFilesQuery } from "../src/files/queries.ts";
import { timeline } from "../src/library/timeline.ts";
import { locationClusters } from "../src/library/map-clusters.ts";
import { portEngines } from "./support/port-engines.ts";
import { waitFor } from "./support/polling.ts";

// PostgreSQL: a writer's open transaction, a search and the probe of what the search waits for, each on a connection.
const { engines } = portEngines("listing", { connections: 4 });

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const P1 = uuid(0xa1);
const P2 = uuid(0xa2);
const D1 = uuid(0xd1);
const O2P = uuid(0xb1);

interface Fixture {
  id: string;
  org?: string;
  project?: string;
  folder?: string | null;
  mediaType?: string;
  filename?: string;
  title?: string | null;
  tags?: string[];
  size?: number;
  createdAt: string;
  takenAt?: string | null;
  visibleText?: string | null;
  userDescription?: string | null;
  uploadDescription?: string | null;
  status?: string;
  deletedAt?: string | null;
  camera?: { make: string; model: string; lat?: number; lon?: number };
}

const TITLES = ["alpha", "Beta", null, "gamma", "Delta", "epsilon", null, "Zeta"];
const TAGS = [["Holiday"], ["holiday", "Family"], [], ["family"], ["Work"]];
const CAMERAS = [
  { make: "Canon", model: "EOS R5", lat: 48.85, lon: 2.35 },
  { make: "Apple", model: "iPhone 12", lat: 48.86, lon: 2.34 },
  { make: "Apple", model: "iPhone 12", lat: -16.5, lon: 179.5 },
  { make: "Canon", model: "EOS 5D", lat: -17.2, lon: -179.6 },
  { make: "Nikon", model: "Z6" },
];

/** 24 files of one organization with every filter's field varied, some sharing created_at (ties broken by id). */
const generated: Fixture[] = Array.from({ length: 24 }, (_, i) => ({
  id: uuid(0x100 + i),
  project: i % 6 === 5 ? P2 : P1,
  folder: i % 6 === 5 ? null : i % 4 === 1 ? D1 : null,
  mediaType: ["image", "document", "video"][i % 3]!,
  filename: `file-${String.fromCharCode(97 + ((i * 7) % 26))}${i}.bin`,
  title: TITLES[i % TITLES.length]!,
  tags: TAGS[i % TAGS.length]!,
  size: ((i * 37) % 11) * 1000,
  createdAt: `2024-01-${String(1 + Math.floor(i / 2)).padStart(2, "0")}T10:00:00.000Z`,
  takenAt: i % 5 === 4 ? null : `${2020 + (i % 3)}-${String(1 + (i % 6)).padStart(2, "0")}-${String(10 + (i % 15)).padStart(2, "0")}T${String(i % 24).padStart(2, "0")}:30:00.000Z`,
  userDescription: i % 4 === 0 ? `described ${i}` : null,
  uploadDescription: i % 7 === 3 ? `uploaded ${i}` : null,
  status: i % 5 === 2 ? "failed" : "completed",
  camera: i % 3 === 0 ? CAMERAS[(i / 3) % CAMERAS.length]! : undefined,
}));

/** The keyword fixtures (ids from 0x200): each test below names which must match. */
const S = {
  report: uuid(0x201),
  harbour: uuid(0x202),
  cafe: uuid(0x203),
  receipt: uuid(0x204),
  minutes: uuid(0x205),
  deletedReport: uuid(0x206),
  otherOrg: uuid(0x207),
  oldDeleted: uuid(0x208),
};
const searchable: Fixture[] = [
  { id: S.report, title: "Annual report 2024", filename: "annual-report.pdf", mediaType: "document", createdAt: "2024-03-01T00:00:00.000Z" },
  { id: S.harbour, filename: "IMG_1234.jpg", visibleText: "Harbour at dawn, boats running", tags: ["Boat", "Sea"], createdAt: "2024-03-02T00:00:00.000Z" },
  { id: S.cafe, title: "Café généreux", userDescription: "A generous breakfast", createdAt: "2024-03-03T00:00:00.000Z" },
  { id: S.receipt, filename: "scan.png", uploadDescription: "Receipt for e-mail services", visibleText: "TOTAL 42.00 EUR", createdAt: "2024-03-04T00:00:00.000Z" },
  { id: S.minutes, title: "Minutes", visibleText: "annual general meeting minutes", createdAt: "2024-03-05T00:00:00.000Z" },
  { id: S.deletedReport, title: "Annual report 2023", createdAt: "2024-03-06T00:00:00.000Z", deletedAt: "2031-05-20T00:00:00.000Z" },
  { id: S.otherOrg, org: "o2", project: O2P, title: "Annual report of another organization", createdAt: "2024-03-07T00:00:00.000Z", camera: { make: "Canon", model: "EOS R5", lat: 48.85, lon: 2.35 } },
  { id: S.oldDeleted, title: "Long gone", createdAt: "2024-03-08T00:00:00.000Z", deletedAt: "2031-03-01T00:00:00.000Z" },
];
const FIXTURES = [...generated, ...searchable];
/** The organization's live files: what an unfiltered listing holds. */
const LIVE = FIXTURES.filter((f) => (f.org ?? "o1") === "o1" && !f.deletedAt);

async function insertFile(db: SqlClient, f: Fixture): Promise<void> {
  const org = f.org ?? "o1";
  await db.run(
    `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, deleted_at, title, tags, size_bytes,
       content_created_at, visible_text, upload_description, user_description, processing_status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      f.id, org, f.project ?? P1, f.folder ?? null, f.mediaType ?? "image", f.filename ?? `${f.id}.jpg`, f.createdAt, f.createdAt, f.deletedAt ?? null, f.title ?? null,
      JSON.stringify(f.tags ?? []), f.size ?? 0, f.takenAt ?? null, f.visibleText ?? null, f.uploadDescription ?? null, f.userDescription ?? null, f.status ?? "completed",
    ],
  );
  if (f.camera) {
    await db.run("INSERT INTO camera_facts (file_id, org_id, make, model, latitude, longitude) VALUES (?, ?, ?, ?, ?, ?)", [
      f.id, org, f.camera.make, f.camera.model, f.camera.lat ?? null, f.camera.lon ?? null,
    ]);
  }
}

async function seed(db: SqlClient): Promise<void> {
  if (await db.one("SELECT 1 AS seeded FROM organizations WHERE id = 'o1'")) return;
  for (const org of ["o1", "o2"]) await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x')", [org, org, org]);
  for (const [id, org, name] of [[P1, "o1", "One"], [P2, "o1", "Two"], [O2P, "o2", "Other"]] as const) {
    await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, 0, 'x', 'x')", [id, org, name, name.toLowerCase()]);
  }
  await db.run("INSERT INTO folders (id, org_id, project_id, parent_id, name, name_key, created_at, updated_at) VALUES (?, 'o1', ?, NULL, 'Inbox', 'inbox', 'x', 'x')", [D1, P1]);
  for (const f of FIXTURES) await insertFile(db, f);
}

const QUERY: ListFilesQuery = { ...NO_FILTERS, search: null, searchMode: "all", tags: [], sortBy: null, sortOrder: "desc", limit: 100, offset: 0 };

/** The listing's default and explicit orders over the fixture, written out in JavaScript. */
function sortedIds(files: Fixture[], sortBy: NonNullable<ListFilesQuery["sortBy"]>, order: "asc" | "desc"): string[] {
  const key = (f: Fixture): string | number | null =>
    sortBy === "created_at" ? f.createdAt : sortBy === "content_created_at" ? (f.takenAt ?? null) : sortBy === "size_bytes" ? (f.size ?? 0) : (f.title ?? f.filename ?? `${f.id}.jpg`).replace(/[A-Z]/g, (c) => c.toLowerCase());
  const compare = (a: Fixture, b: Fixture): number => {
    const [x, y] = [key(a), key(b)];
    // NULL sorts first ascending (SQLite's place for it).
    if (x !== y) return x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
  const ascending = [...files].sort(compare).map((f) => f.id);
  return order === "asc" ? ascending : ascending.reverse();
}

/** Each engine's answers by case name, compared at the end. */
const answers = new Map<string, Map<string, unknown>>();
function record(engine: string, name: string, value: unknown): void {
  if (!answers.has(engine)) answers.set(engine, new Map());
  answers.get(engine)!.set(name, value);
}

const FILTER_CASES: { name: string; filters: Partial<FileFilters> & { tags?: string[] }; expect: (f: Fixture) => boolean }[] = [
  { name: "tags, case-insensitive, all must match", filters: { tags: ["HOLIDAY", "family"] }, expect: (f) => ["holiday", "family"].every((t) => (f.tags ?? []).some((x) => x.toLowerCase() === t)) },
  { name: "one tag", filters: { tags: ["work"] }, expect: (f) => (f.tags ?? []).includes("Work") },
  { name: "media types", filters: { mediaTypes: ["video", "document"] }, expect: (f) => ["video", "document"].includes(f.mediaType ?? "image") },
  { name: "ids", filters: { ids: [uuid(0x101), uuid(0x105).toUpperCase(), S.otherOrg] }, expect: (f) => [uuid(0x101), uuid(0x105)].includes(f.id) },
  { name: "folder", filters: { folderId: D1 }, expect: (f) => f.folder === D1 },
  { name: "project", filters: { projectId: P2 }, expect: (f) => f.project === P2 },
  { name: "with a description", filters: { hasDescription: true }, expect: (f) => !!(f.userDescription || f.uploadDescription) },
  { name: "without a description", filters: { hasDescription: false }, expect: (f) => !(f.userDescription || f.uploadDescription) },
  { name: "processing status", filters: { processingStatus: "failed" }, expect: (f) => f.status === "failed" },
  { name: "created between", filters: { dateFrom: "2024-01-03", dateTo: "2024-01-06T10:00:00Z" }, expect: (f) => f.createdAt >= "2024-01-03T00:00:00.000Z" && f.createdAt <= "2024-01-06T10:00:00.000Z" },
  { name: "taken between", filters: { takenFrom: "2021-01-01", takenTo: "2021-12-31T23:59:59Z" }, expect: (f) => !!f.takenAt && f.takenAt.startsWith("2021") },
  { name: "camera, part of make and model in any case", filters: { camera: "iphone" }, expect: (f) => f.camera?.model === "iPhone 12" },
  { name: "camera make and model", filters: { camera: "canon eos r" }, expect: (f) => f.camera?.model === "EOS R5" },
  { name: "with a location", filters: { hasLocation: true }, expect: (f) => f.camera?.lat !== undefined },
  { name: "without a location", filters: { hasLocation: false }, expect: (f) => f.camera?.lat === undefined },
  { name: "bounding box", filters: { bbox: { west: 2, south: 48, east: 3, north: 49 } }, expect: (f) => f.camera?.lon !== undefined && f.camera.lon > 2 && f.camera.lon < 3 },
  { name: "bounding box across the antimeridian", filters: { bbox: { west: 179, south: -20, east: -179, north: -10 } }, expect: (f) => f.camera?.lat !== undefined && f.camera.lat < -10 },
  { name: "filters together", filters: { mediaTypes: ["image"], hasDescription: true, tags: ["holiday"] }, expect: (f) => (f.mediaType ?? "image") === "image" && !!(f.userDescription || f.uploadDescription) && (f.tags ?? []).some((t) => t.toLowerCase() === "holiday") },
];

const SEARCH_CASES: { name: string; search: string; mode?: ListFilesQuery["searchMode"]; ids: string[]; ordered?: boolean }[] = [
  { name: "every word must match", search: "annual report", ids: [S.report] },
  { name: "the last word as a prefix", search: "annu", ids: [S.report, S.minutes] },
  { name: "a title hit ranks above one in the visible text", search: "annual", ids: [S.report, S.minutes], ordered: true },
  { name: "metadata mode looks at title, filename, tags and descriptions", search: "annual", mode: "metadata", ids: [S.report] },
  { name: "visible_text mode looks at the visible text alone", search: "annual", mode: "visible_text", ids: [S.minutes] },
  { name: "metadata mode finds a tag", search: "sea", mode: "metadata", ids: [S.harbour] },
  { name: "visible_text mode leaves the tags out", search: "sea", mode: "visible_text", ids: [] },
  { name: "stems: boats finds boat", search: "boats", ids: [S.harbour] },
  { name: "stems: generous finds general too (porter stems both gener)", search: "generous", ids: [S.cafe, S.minutes] },
  { name: "two words, one stemmed", search: "generous breakfast", ids: [S.cafe] },
  { name: "stems and a prefix: gener", search: "gener", ids: [S.cafe, S.minutes] },
  { name: "diacritics folded", search: "cafe genereux", ids: [S.cafe] },
  { name: "a split word is a phrase", search: "e-mail", ids: [S.receipt] },
  { name: "a split word as a prefix", search: "e-mai", ids: [S.receipt] },
  { name: "a file name", search: "img_1234", ids: [S.harbour] },
  { name: "numbers", search: "1234", ids: [S.harbour] },
  { name: "a stop word need not occur", search: "the harbour", ids: [S.harbour] },
  { name: "a stop word last is a prefix", search: "harbour a", ids: [S.harbour] },
  { name: "words in different columns", search: "harbour boat", ids: [S.harbour] },
  { name: "no file holds both", search: "harbour receipt", ids: [] },
  { name: "a prefix is stemmed as FTS5 stems it: runn finds nothing", search: "runn", ids: [] },
  { name: "running finds running", search: "running", ids: [S.harbour] },
  { name: "case", search: "TOTAL eur", ids: [S.receipt] },
  { name: "uploaded and user descriptions", search: "receipt generous", ids: [] },
];

describe.each(engines)("the listing on the port, on $name", ({ name, client }) => {
  test("an unfiltered listing is the organization's live files, newest first; other organizations' and deleted files never show", async () => {
    const db = client();
    await seed(db);
    const { rows, total } = await listFiles(db, "o1", QUERY);
    expect(total).toBe(LIVE.length);
    expect(rows.map((r) => r.id)).toEqual(sortedIds(LIVE, "created_at", "desc"));
    expect((await listFiles(db, "o2", QUERY)).rows.map((r) => r.id)).toEqual([S.otherOrg]);
    expect((await listFiles(db, "nobody", QUERY)).total).toBe(0);
  });

  test("every filter selects what it says", async () => {
    const db = client();
    await seed(db);
    for (const c of FILTER_CASES) {
      const { tags = [], ...filters } = c.filters;
      const { rows, total } = await listFiles(db, "o1", { ...QUERY, ...filters, tags });
      const expected = sortedIds(LIVE.filter(c.expect), "created_at", "desc");
      expect({ case: c.name, ids: rows.map((r) => r.id), total }).toEqual({ case: c.name, ids: expected, total: expected.length });
      expect(expected.length).toBeGreaterThan(0);
      record(name, `filter: ${c.name}`, rows.map((r) => r.id));
    }
  });

  test("every sort order, both directions, paged", async () => {
    const db = client();
    await seed(db);
    for (const sortBy of ["created_at", "content_created_at", "title", "size_bytes"] as const) {
      for (const sortOrder of ["asc", "desc"] as const) {
        const expected = sortedIds(LIVE, sortBy, sortOrder);
        const pages: string[] = [];
        for (let offset = 0; offset < LIVE.length; offset += 7) {
          const { rows, total } = await listFiles(db, "o1", { ...QUERY, sortBy, sortOrder, limit: 7, offset });
          expect(total).toBe(LIVE.length);
          pages.push(...rows.map((r) => r.id));
        }
        expect({ sortBy, sortOrder, ids: pages }).toEqual({ sortBy, sortOrder, ids: expected });
        record(name, `sort: ${sortBy} ${sortOrder}`, pages);
      }
    }
    // With tags: the few matches are sorted (the rare-tags plan); a page past the end is empty.
    const tagged = await listFiles(db, "o1", { ...QUERY, tags: ["family"], sortBy: "title", sortOrder: "asc", limit: 3, offset: 1 });
    const family = LIVE.filter((f) => (f.tags ?? []).some((t) => t.toLowerCase() === "family"));
    expect(tagged.rows.map((r) => r.id)).toEqual(sortedIds(family, "title", "asc").slice(1, 4));
    expect(tagged.total).toBe(family.length);
    expect((await listFiles(db, "o1", { ...QUERY, tags: ["family"], offset: 50 })).rows).toEqual([]);
  });

  test("keyword search: every word, the last as a prefix, phrases, stems, the three modes", async () => {
    const db = client();
    await seed(db);
    for (const c of SEARCH_CASES) {
      const { rows, total } = await listFiles(db, "o1", { ...QUERY, search: c.search, searchMode: c.mode ?? "all" });
      const ids = rows.map((r) => r.id);
      expect({ case: c.name, ids: c.ordered ? ids : [...ids].sort(), total }).toEqual({ case: c.name, ids: c.ordered ? c.ids : [...c.ids].sort(), total: c.ids.length });
      record(name, `search: ${c.name}`, ids);
    }
    // Another organization's file and a deleted one hold the words too, and are never found.
    expect((await listFiles(db, "o2", { ...QUERY, search: "annual report" })).rows.map((r) => r.id)).toEqual([S.otherOrg]);
    // Searching with an order and filters: the order is the one asked, the filters apply.
    const byTitle = await listFiles(db, "o1", { ...QUERY, search: "annu", sortBy: "title", sortOrder: "asc" });
    expect(byTitle.rows.map((r) => r.id)).toEqual([S.report, S.minutes]);
    const withTag = await listFiles(db, "o1", { ...QUERY, search: "harbour", tags: ["SEA"] });
    expect(withTag.rows.map((r) => r.id)).toEqual([S.harbour]);
    expect((await listFiles(db, "o1", { ...QUERY, search: "annual", mediaTypes: ["image"] })).rows.map((r) => r.id)).toEqual([S.minutes]);
    expect((await listFiles(db, "o1", { ...QUERY, search: "annual", mediaTypes: ["video"] })).total).toBe(0);
    const paged = await listFiles(db, "o1", { ...QUERY, search: "annual", limit: 1, offset: 1 });
    expect([paged.rows.map((r) => r.id), paged.total]).toEqual([[S.minutes], 2]);
    await expect(listFiles(db, "o1", { ...QUERY, search: " -- ** " })).rejects.toThrow(/at least one letter or digit/);
  });

  test("a changed file is found by its new words at the next search, and no longer by its old ones; a deleted row leaves the index", async () => {
    const db = client();
    await seed(db);
    const id = uuid(0x301);
    await insertFile(db, { id, title: "Quarterly figures", createdAt: "2024-04-01T00:00:00.000Z" });
    expect((await listFiles(db, "o1", { ...QUERY, search: "quarterly" })).rows.map((r) => r.id)).toEqual([id]);
    await db.run("UPDATE files SET title = ?, tags = ? WHERE id = ?", ["Monthly numbers", '["ledger"]', id]);
    expect((await listFiles(db, "o1", { ...QUERY, search: "quarterly" })).total).toBe(0);
    expect((await listFiles(db, "o1", { ...QUERY, search: "ledger month" })).rows.map((r) => r.id)).toEqual([id]);
    // Soft-deleted: out of the listing at once; removed for good: out of the index.
    await db.run("UPDATE files SET deleted_at = ? WHERE id = ?", ["2031-05-25T00:00:00.000Z", id]);
    expect((await listFiles(db, "o1", { ...QUERY, search: "ledger" })).total).toBe(0);
    await db.run("DELETE FROM files WHERE id = ?", [id]);
    expect((await listFiles(db, "o1", { ...QUERY, search: "ledger" })).total).toBe(0);
    if (name === "postgres") expect(await db.one("SELECT 1 AS left FROM file_search_terms t WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.search_rowid = t.rowid)")).toBeNull();
  });

  test.skipIf(name !== "postgres")("a search waits for a writer that holds a queued row, then finds the file by the words it committed", async () => {
    const db = client();
    await seed(db);
    const id = uuid(0x302);
    await insertFile(db, { id, title: "Draft agenda", createdAt: "2024-04-02T00:00:00.000Z" });
    let search: Promise<Awaited<ReturnType<typeof listFiles>>> | null = null;
    await db.transaction(async (tx) => {
      // The update's trigger takes the queued row (locked until commit) and queues the new words.
      await tx.run("UPDATE files SET title = ? WHERE id = ?", ["Final programme", id]);
      search = listFiles(db, "o1", { ...QUERY, search: "programme" });
      await waitFor(
        () => db.one("SELECT 1 AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM files_fts WHERE rowid = %'"),
        { what: "the search to wait for the writer's row", timeoutMs: 20_000 },
      );
    });
    expect((await search!).rows.map((r) => r.id)).toEqual([id]);
    expect((await listFiles(db, "o1", { ...QUERY, search: "agenda" })).total).toBe(0);
    await db.run("DELETE FROM files WHERE id = ?", [id]);
  }, 30_000);

  test("a document's 200,000 characters of visible text: its first and last words are found", async () => {
    const db = client();
    await seed(db);
    const id = uuid(0x303);
    const words = Array.from({ length: 33_000 }, (_, i) => `w${(i * 7919) % 5000}`).join(" ");
    const head = `zeppelin ${words} ${"filler ".repeat(2_000)}`;
    const text = `${head.slice(0, 200_000 - " aardvarkian".length)} aardvarkian`;
    expect(text.length).toBe(200_000);
    await insertFile(db, { id, mediaType: "document", filename: "long.pdf", visibleText: text, createdAt: "2024-04-03T00:00:00.000Z" });
    for (const search of ["zeppelin", "aardvarkian", "w4999 zeppelin"]) {
      expect({ search, ids: (await listFiles(db, "o1", { ...QUERY, search, searchMode: "visible_text" })).rows.map((r) => r.id) }).toEqual({ search, ids: [id] });
    }
    await db.run("DELETE FROM files WHERE id = ?", [id]);
  });

  test("a search inside a transaction finds the file the transaction wrote (on PostgreSQL tokenized in that transaction)", async () => {
    const db = client();
    await seed(db);
    const id = uuid(0x304);
    await db.transaction(async (tx) => {
      await insertFile(tx, { id, title: "Uncommitted marmalade", createdAt: "2024-04-04T00:00:00.000Z" });
      expect((await listFiles(tx, "o1", { ...QUERY, search: "marmalade" })).rows.map((r) => r.id)).toEqual([id]);
    });
    expect((await listFiles(db, "o1", { ...QUERY, search: "marmalade" })).rows.map((r) => r.id)).toEqual([id]);
    await db.run("DELETE FROM files WHERE id = ?", [id]);
  });

  test("the trash: deleted files within retention, newest deletion first, paged; not in the listing", async () => {
    const db = client();
    await seed(db);
    const cutoff = "2031-04-25T00:00:00.000Z";
    const trash = await listDeletedFiles(db, "o1", cutoff, 10, 0);
    expect([trash.rows.map((r) => r.id), trash.total]).toEqual([[S.deletedReport], 1]);
    expect(trash.rows[0]!.deleted_at).toBe("2031-05-20T00:00:00.000Z");
    const all = await listDeletedFiles(db, "o1", "2031-01-01T00:00:00.000Z", 1, 0);
    expect([all.rows.map((r) => r.id), all.total]).toEqual([[S.deletedReport], 2]);
    expect((await listDeletedFiles(db, "o1", "2031-01-01T00:00:00.000Z", 1, 1)).rows.map((r) => r.id)).toEqual([S.oldDeleted]);
    expect((await listDeletedFiles(db, "o2", "2031-01-01T00:00:00.000Z", 10, 0)).total).toBe(0);
    record(name, "trash", all.rows.map((r) => r.id));
  });

  test("the timeline: buckets per UTC year, month and day under the listing's filters", async () => {
    const db = client();
    await seed(db);
    const dated = LIVE.filter((f) => f.takenAt);
    const years = await timeline(db, "o1", NO_FILTERS, "year", "asc");
    expect(years.buckets.map((b) => [b.key, b.count])).toEqual(["2020", "2021", "2022"].map((y) => [y, dated.filter((f) => f.takenAt!.startsWith(y)).length]));
    expect([years.datedCount, years.undatedCount]).toEqual([dated.length, LIVE.length - dated.length]);
    expect(years.buckets[0]!).toMatchObject({ start: "2020-01-01T00:00:00.000Z", end: "2021-01-01T00:00:00.000Z" });
    const months = await timeline(db, "o1", { ...NO_FILTERS, mediaTypes: ["image"] }, "month", "desc");
    const images = dated.filter((f) => (f.mediaType ?? "image") === "image");
    const monthKeys = [...new Set(images.map((f) => f.takenAt!.slice(0, 7)))].sort().reverse();
    expect(months.buckets.map((b) => [b.key, b.count])).toEqual(monthKeys.map((k) => [k, images.filter((f) => f.takenAt!.startsWith(k)).length]));
    const days = await timeline(db, "o1", { ...NO_FILTERS, projectId: P1 }, "day", "desc");
    expect(days.buckets.reduce((n, b) => n + b.count, 0)).toBe(dated.filter((f) => (f.project ?? P1) === P1).length);
    record(name, "timeline", [years, months, days]);
  });

  test("the map: clusters of located files at each zoom, within a viewport (also across the antimeridian), newest first", async () => {
    const db = client();
    await seed(db);
    const located = LIVE.filter((f) => f.camera?.lat !== undefined);
    const world = await locationClusters(db, "o1", NO_FILTERS, { zoom: 0, limit: 500 });
    expect(world.locatedCount).toBe(located.length);
    expect(world.clusters.reduce((n, c) => n + c.count, 0)).toBe(located.length);
    const paris = located.filter((f) => f.camera!.lon! > 2 && f.camera!.lon! < 3);
    const zoomed = await locationClusters(db, "o1", { ...NO_FILTERS, bbox: { west: 2, south: 48, east: 3, north: 49 } }, { zoom: 16, limit: 500 });
    expect(zoomed.locatedCount).toBe(paris.length);
    expect(zoomed.clusters.length).toBe(2);
    const fiji = await locationClusters(db, "o1", { ...NO_FILTERS, bbox: { west: 179, south: -20, east: -179, north: -10 } }, { zoom: 3, limit: 500 });
    const across = located.filter((f) => f.camera!.lat! < -10);
    expect(fiji.locatedCount).toBe(across.length);
    // Either side of the antimeridian a cluster of its own, the largest first, each one's newest taken first (files 21 and 6 of 2020; 9 undated).
    expect(fiji.clusters.map((c) => [c.count, c.fileIds])).toEqual([[2, [uuid(0x100 + 21), uuid(0x100 + 6)]], [1, [uuid(0x100 + 9)]]]);
    expect(across.map((f) => f.id).sort()).toEqual([uuid(0x100 + 6), uuid(0x100 + 9), uuid(0x100 + 21)]);
    // Canon's three located photos: two in Paris, one by Fiji; limit 1 keeps the largest.
    const one = await locationClusters(db, "o1", { ...NO_FILTERS, camera: "canon" }, { zoom: 0, limit: 1 });
    expect([one.clusters.map((c) => c.count), one.truncated, one.locatedCount]).toEqual([[2], true, 3]);
    record(name, "map", [world, zoomed, fiji, one]);
  });

  test("many files at once: two searches together find them all (on PostgreSQL sharing the tokenizing); past 2,000 tag matches the page is read in order", async () => {
    const db = client();
    await seed(db);
    const count = 2_100;
    const ids = Array.from({ length: count }, (_, i) => uuid(0x1000 + i));
    const values = ids.map((id, i) => [id, "o1", P1, "image", `bulk-${i}.jpg`, "2024-05-01T00:00:00.000Z", "2024-05-01T00:00:00.000Z", `Bulk harvest ${i}`, '["Bulk"]']);
    for (let i = 0; i < values.length; i += 200) {
      const chunk = values.slice(i, i + 200);
      await db.run(
        `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, title, tags) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
        chunk.flat(),
      );
    }
    const [a, b] = await Promise.all([listFiles(db, "o1", { ...QUERY, search: "harvest" }), listFiles(db, "o1", { ...QUERY, search: "bulk harv", searchMode: "metadata" })]);
    expect([a.total, b.total]).toEqual([count, count]);
    if (name === "postgres") expect((await db.one<{ n: number }>("SELECT count(*) AS n FROM files_fts"))!.n).toBe(0);
    // Equal relevance, equal created_at: the highest ids first.
    const newestIds = [...ids].reverse();
    const tagged = await listFiles(db, "o1", { ...QUERY, search: "harvest", tags: ["bulk"], limit: 20, offset: 20 });
    expect([tagged.total, tagged.rows.map((r) => r.id)]).toEqual([count, newestIds.slice(20, 40)]);
    const byTitle = await listFiles(db, "o1", { ...QUERY, tags: ["BULK"], sortBy: "size_bytes", sortOrder: "asc", limit: 5 });
    expect([byTitle.total, byTitle.rows.map((r) => r.id)]).toEqual([count, [...ids].sort().slice(0, 5)]);
    record(name, "many tagged", [tagged.rows.map((r) => r.id), byTitle.rows.map((r) => r.id)]);
    await db.run("DELETE FROM files WHERE filename LIKE 'bulk-%'");
  });
});

describe.skipIf(engines.length < 2)("both engines", () => {
  test("give the same answers to every case above", () => {
    const [sqlite, postgres] = [answers.get("sqlite")!, answers.get("postgres")!];
    expect(sqlite.size).toBeGreaterThan(40);
    expect([...postgres.keys()].sort()).toEqual([...sqlite.keys()].sort());
    for (const [name, value] of sqlite) expect({ name, value: postgres.get(name) }).toEqual({ name, value });
  });
});
