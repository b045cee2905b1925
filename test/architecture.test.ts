/**
 * Rules of the code's shape that a reviewer would otherwise have to remember: each table that
 * has an owner is written by that owner alone; stores are asked for capabilities; paths under the
 * data directory are named in one place; module-level state is process-wide by nature.
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

/** Source files (relative to src/) holding SQL that writes `table`, outside `ownerDirs`. */
async function writersOf(table: string, owners: string[]): Promise<string[]> {
  const writes = new RegExp(`\\b(UPDATE\\s+${table}\\s+SET|INSERT\\s+(OR\\s+\\w+\\s+)?INTO\\s+${table}\\b|DELETE\\s+FROM\\s+${table}\\b|REPLACE\\s+INTO\\s+${table}\\b)`, "i");
  const found: string[] = [];
  for await (const path of new Glob("**/*.ts").scan(SRC)) {
    // Migrations (and their PostgreSQL translation) create and reshape every table; they own none of the rows.
    if (path.startsWith("db/migrations/") || path === "db/postgres-migrations.ts" || owners.some((owner) => path === owner || path.startsWith(owner))) continue;
    if (writes.test(await Bun.file(join(SRC, path)).text())) found.push(relative(SRC, join(SRC, path)));
  }
  return found.sort();
}

test("only src/files/ writes the files table", async () => {
  expect(await writersOf("files", ["files/"])).toEqual([]);
});

test("only the stage runner writes file_stage_runs", async () => {
  expect(await writersOf("file_stage_runs", ["processing/stage-runner.ts"])).toEqual([]);
});

test("only src/jobs/ writes the jobs table", async () => {
  expect(await writersOf("jobs", ["jobs/"])).toEqual([]);
});

test("only cloud/connections.ts writes cloud connections, OAuth states and picker sessions", async () => {
  for (const table of ["cloud_connections", "cloud_oauth_states", "cloud_picker_sessions"]) {
    expect(await writersOf(table, ["cloud/connections.ts"])).toEqual([]);
  }
});

test("only cloud/cloud-jobs.ts writes cloud jobs and their items", async () => {
  for (const table of ["cloud_jobs", "cloud_job_items"]) {
    expect(await writersOf(table, ["cloud/cloud-jobs.ts"])).toEqual([]);
  }
});

test("only rules/rules.ts writes rules and their applications, only rules/auto-match.ts the auto-matching models", async () => {
  for (const table of ["rules", "rule_applications"]) expect(await writersOf(table, ["rules/rules.ts"])).toEqual([]);
  for (const table of ["auto_match_models", "auto_match_labels"]) expect(await writersOf(table, ["rules/auto-match.ts"])).toEqual([]);
});

test("only images/image-findings.ts writes what the image detectors found", async () => {
  expect(await writersOf("image_findings", ["images/image-findings.ts"])).toEqual([]);
});

test("only webhooks/webhooks.ts writes webhooks, their deliveries and attempts", async () => {
  for (const table of ["webhooks", "webhook_deliveries", "webhook_attempts"]) expect(await writersOf(table, ["webhooks/webhooks.ts"])).toEqual([]);
});

test("only watch/watched-folders.ts writes watched folders and their items; only ingest/ingest.ts file origins", async () => {
  for (const table of ["watched_folders", "watch_items"]) expect(await writersOf(table, ["watch/watched-folders.ts"])).toEqual([]);
  expect(await writersOf("file_origins", ["ingest/ingest.ts"])).toEqual([]);
});

test("only ingest/sessions.ts writes upload sessions and their items, only ingest/intent-store.ts upload intents and their parts", async () => {
  for (const table of ["upload_sessions", "session_items"]) expect(await writersOf(table, ["ingest/sessions.ts"])).toEqual([]);
  for (const table of ["upload_intents", "intent_parts"]) expect(await writersOf(table, ["ingest/intent-store.ts"])).toEqual([]);
});

test("only duplicates/duplicate-store.ts writes fingerprints, near-duplicate pairs and their dismissals", async () => {
  for (const table of ["image_fingerprints", "duplicate_pairs", "duplicate_dismissals"]) expect(await writersOf(table, ["duplicates/duplicate-store.ts"])).toEqual([]);
});

test("only people/people.ts writes faces and people", async () => {
  for (const table of ["faces", "people"]) expect(await writersOf(table, ["people/people.ts"])).toEqual([]);
});

test("per-kind tables have one writer: video facts, image facts, document facts, link crawls, image compliance", async () => {
  expect(await writersOf("video_facts", ["video/video-facts.ts"])).toEqual([]);
  expect(await writersOf("image_facts", ["images/image-facts.ts"])).toEqual([]);
  expect(await writersOf("document_facts", ["documents/document-facts.ts"])).toEqual([]);
  expect(await writersOf("link_crawls", ["links/link-crawls.ts"])).toEqual([]);
  expect(await writersOf("image_compliance", ["compliance/image-compliance.ts"])).toEqual([]);
});

test("only camera/camera-facts.ts writes camera facts", async () => {
  expect(await writersOf("camera_facts", ["camera/camera-facts.ts"])).toEqual([]);
});

test("only mail/mail-accounts.ts writes mail accounts and their messages", async () => {
  for (const table of ["mail_accounts", "mail_messages"]) expect(await writersOf(table, ["mail/mail-accounts.ts"])).toEqual([]);
});

test("each accounts table has one writer", async () => {
  const owners: Record<string, string> = {
    users: "accounts/users.ts",
    memberships: "accounts/users.ts",
    user_sessions: "accounts/sessions.ts",
    identities: "accounts/oidc.ts",
    oidc_flows: "accounts/oidc.ts",
    email_tokens: "accounts/email-tokens.ts",
    login_throttle: "accounts/throttle.ts",
    support_messages: "support/support.ts",
    payment_events: "payments/webhooks.ts",
  };
  for (const [table, owner] of Object.entries(owners)) expect({ table, writers: await writersOf(table, [owner]) }).toEqual({ table, writers: [] });
});

/** Source files (relative to src/) whose text matches `pattern`, outside `owners` (files or folders). */
async function filesMatching(pattern: RegExp, owners: string[]): Promise<string[]> {
  const found: string[] = [];
  for await (const path of new Glob("**/*.ts").scan(SRC)) {
    if (owners.some((owner) => path === owner || path.startsWith(owner))) continue;
    if (pattern.test(await Bun.file(join(SRC, path)).text())) found.push(path);
  }
  return found.sort();
}

test("blob stores are asked for capabilities, never checked with instanceof outside src/storage/", async () => {
  expect(await filesMatching(/instanceof\s+(LocalBlobStore|S3BlobStore)\b|blobs\.kind\b/, ["storage/"])).toEqual([]);
});

test("only storage/data-dir.ts names the places under the data directory", async () => {
  // A quoted name is a path being built (join(dir, "staging")); comments may still mention them,
  // and a union of service names may hold one (Pick<Deps, "db" | "blobs">).
  const names = /(?<!\| )["'](mediabox\.db|mediabox\.lock|local-s3\.json|staging|secrets|blobs)["'](?! \|)/;
  expect(await filesMatching(names, ["storage/data-dir.ts"])).toEqual([]);
});

/**
 * Module-level state is shared by every server in the process (tests run several side by side),
 * so per-server state lives on the AppContext. What remains at module level is process-wide by
 * nature, each with its reason; a new entry needs one too.
 */
const PROCESS_WIDE_STATE: Record<string, string> = {
  "documents/document-reader.ts liveChildren": "every reader child of the process is killed when the process exits",
  "documents/document-reader.ts exitHookInstalled": "the process exit hook is installed once",
  "documents/keyword-query.ts scratch": "a scratch FTS table used as a pure tokenizing and stemming function",
  "documents/chunk-terms.ts numbers": "stems numbered for the remembered chunks below (pure derived data, bounded, shared by every database: chunk ids are unique)",
  "documents/chunk-terms.ts remembered": "each chunk's counted stems by chunk id (a chunk's text never changes; bounded, least recently used dropped)",
  "documents/keyword-query.ts common": "chunk counts of common words, kept per keyword index (a WeakMap keyed by the index)",
  "documents/query-expansion.ts counted": "chunk counts of words, kept per keyword index (a WeakMap keyed by the index)",
  "documents/keyword-index.ts indexes": "one keyword index per database client (a WeakMap keyed by the client), which the two above are kept by",
  "files/keyword-search.ts searches": "the library's keyword search per database client (a WeakMap keyed by the client): on PostgreSQL it keeps its scratch tokenizer",
  "rules/auto-match.ts loaded": "auto-matching models read from the database, per database (a WeakMap keyed by the Database), replaced when a newer one is trained",
  "documents/pdfjs.ts pdfjsLoad": "pdf.js is loaded once per process (reader child)",
  "documents/page-images.ts pagesBeingDrawn": "drawings in flight, keyed by file id (unique across the servers of a process), removed when each ends",
  "documents/reader-child.ts pendingOcr": "the reader child's own requests to its parent (a process entry point)",
  "documents/reader-child.ts nextOcr": "the reader child's own request counter (a process entry point)",
  "documents/reader-child.ts tokenizers": "the reader child's loaded tokenizers (a process entry point)",
  "documents/reader-child.ts layoutModels": "the reader child's loaded layout models (a process entry point)",
  "embeddings/use-worker.ts model": "the text model inside its own worker thread",
  "embeddings/use-worker.ts idle": "whether this worker thread moved itself to the idle scheduling class",
  "camera/gazetteer.ts table": "the bundled gazetteer, read once per process on the first lookup and never changed",
  "ocr/ppocr/ppocr-worker.ts loaded": "the PP-OCR models inside their own worker thread",
  "embeddings/folder-model-worker.ts loaded": "the folder text model inside its own worker thread",
  "db/wal-worker.ts db": "the checkpoint thread's own database connection",
  "http/request-context.ts infos": "request-scoped data keyed by the Request object itself",
  "images/heic.ts thread": "one stateless HEIC decoding thread serves the process",
  "images/heic-worker.ts queue": "serializes decodes inside the HEIC worker thread",
  "images/jxl.ts thread": "one stateless JPEG XL decoding thread serves the process",
  "images/jxl-worker.ts ready": "the wasm decoder inside its own worker thread",
  "images/raw-decode.ts thread": "one RAW developing thread serves the process",
  "images/raw-decode-worker.ts libraw": "the wasm LibRaw inside its own worker thread, reused for each file",
  "images/schema-fill.ts compiled": "compiled validators memoized by schema object, which never changes",
  "images/vision-tfjs.ts runtime": "tfjs keeps one global backend per process",
  "images/vision-tfjs.ts routerRegistered": "tfjs's IO router is global to the process",
  "images/vision-tfjs.ts queue": "tfjs's wasm backend runs one inference at a time per process",
  "links/page-reader.ts thread": "one stateless page-reading thread serves the process",
  "log.ts waiting": "log lines of the turn, on their way to the process's own stdout",
  "models/transformers.ts fetchGuarded": "the network guard wraps the process's global fetch once",
  "native/packages.ts extracted": "embedded assets are unpacked once per process",
  "native/packages.ts unpacking": "the one background unpack of the embedded assets every consumer of the process awaits",
  "native/packages.ts embeddedModels": "where the binary's embedded model folders land, read once from its own tree (never changes)",
  "native/event-loop-monitor.ts processMonitor": "one event loop per process, sampled by one timer whichever servers share it",
  "native/event-loop-monitor.ts schedstat": "the main thread's scheduler counters, one open file for the process's monitor",
  "native/worker-thread.ts failures": "worker threads are the process's; their failures are counted where they happen, for GET /metrics",
  "metrics.ts processMetrics": "CPU, memory and event-loop figures belong to the process, and their collectors cannot be stopped",
  "storage/hash-threads.ts pool": "hashing threads shared by the process; a file's hash state lives in its thread",
  "storage/hash-worker.ts streams": "the hash state of the files being written through this hashing thread",
  "vectors/dot-kernel.ts compiled": "the scan kernel's compiled WebAssembly module, compiled once per process",
  "vectors/dot-kernel.ts instances": "one kernel instance per scan memory (a WeakMap keyed by the memory)",
  "vectors/scan-threads.ts threads": "stateless vector scan threads shared by the process",
  "vectors/scan-threads.ts ready": "how many scan threads started, for the shared pool",
};

test("no module-level mutable state outside the listed process-wide resources", async () => {
  // `let` at the top level, or an empty Map/Set/WeakMap created there (a cache or registry).
  const declaration = /^(?:export\s+)?(?:let\s+(\w+)|const\s+(\w+)(?::[^=]+)?\s*=\s*new\s+(?:Map|Set|WeakMap|WeakSet)\b(?:<.*>)?\(\);?\s*$)/gm;
  const found: string[] = [];
  for await (const path of new Glob("**/*.ts").scan(SRC)) {
    const text = await Bun.file(join(SRC, path)).text();
    for (const match of text.matchAll(declaration)) found.push(`${path} ${match[1] ?? match[2]}`);
  }
  const unexplained = found.filter((entry) => !(entry in PROCESS_WIDE_STATE));
  expect(unexplained.sort()).toEqual([]);
  // Entries whose state is gone must leave the list too.
  expect(Object.keys(PROCESS_WIDE_STATE).filter((entry) => !found.includes(entry)).sort()).toEqual([]);
});

/**
 * What a module does with a file of some kind is asked of the kind (MediaKind in
 * src/kinds/media-kind.ts), not decided by comparing its media type: a new kind then needs no
 * change outside its folder. Branches on a media type stay in the kinds' own folders and in these
 * files, each for its reason (the number is how many branches the file has: a new one needs its
 * reason here too, or belongs in a kind's descriptor).
 */
// The dashboard (dashboard/web/) is a browser program drawing the API's File variants: it cannot
// ask the server's registry, and draws any kind it has no view for with KindFields.
const KIND_FOLDERS = ["images/", "documents/", "video/", "links/", "kinds/", "db/migrations/", "dashboard/web/"];
const MEDIA_TYPE_BRANCHES: Record<string, { count: number; why: string }> = {
  "library/similar.ts": { count: 2, why: "similar images and videos: a video is matched by its keyframes" },
  "library/routes.ts": { count: 1, why: "format=markdown is the spec's, for images only" },
  "rules/file-facts.ts": { count: 1, why: "a saved link and the images taken from its page arrived by the link source" },
  "rules/schema-action.ts": { count: 1, why: "a rule's custom schema: an image is filled from its findings and variant (as its pipeline fills it), other files from their text" },
  "cli/import-client.ts": { count: 1, why: "the CLI sends documents over 50 MB by intent (the server's document limit)" },
  "ingest/routes.ts": { count: 1, why: "the spec's upload answer has text_extraction_status for documents" },
  "ingest/batch-views.ts": { count: 1, why: "the spec's batch item has text_extraction_status for documents" },
};

test("media types are branched on only in the kinds' folders and the listed files", async () => {
  const branch = /(media_?[tT]ype|mediaType)\s*[!=]==\s*["']|["'](image|document|video|link)["']\s*[!=]==|media_type\s*(=|IN)\s*\(?'/g;
  const found: Record<string, number> = {};
  for await (const path of new Glob("**/*.{ts,tsx}").scan(SRC)) {
    if (KIND_FOLDERS.some((dir) => path.startsWith(dir))) continue;
    const count = (await Bun.file(join(SRC, path)).text()).match(branch)?.length ?? 0;
    if (count) found[path] = count;
  }
  const allowed = Object.fromEntries(Object.entries(MEDIA_TYPE_BRANCHES).map(([path, { count }]) => [path, count]));
  expect(found).toEqual(allowed);
});

test("every kind's descriptor (src/<kind>/kind.ts) is registered in app.ts's KINDS, and the built-in types are listed once", async () => {
  const app = await Bun.file(join(SRC, "app.ts")).text();
  const registered = /const KINDS = \[([^\]]*)\]/.exec(app)?.[1]?.split(",").map((name) => name.trim()) ?? [];
  const described: string[] = [];
  for await (const path of new Glob("*/kind.ts").scan(SRC)) {
    const name = /export function (\w+Kind)\(/.exec(await Bun.file(join(SRC, path)).text())?.[1];
    if (name) described.push(name);
  }
  expect(registered.sort()).toEqual(described.sort());
  // The media types are the registry's: no module lists the built-in ones again.
  const listing = /["'](image|document|video|link)["'],\s*["'](image|document|video|link)["'],\s*["'](image|document|video|link)["']/;
  expect(await filesMatching(listing, ["files/file.ts", "db/migrations/"])).toEqual([]);
});

test("pipeline stages read their typed options, built once from the settings, never the flat config", async () => {
  const pipelines: string[] = [];
  const readers: string[] = [];
  for await (const path of new Glob("**/*-pipeline.ts").scan(SRC)) {
    pipelines.push(path);
    // Passing the settings to an options builder is how the options are made; reading one is not.
    if (/\bctx\.config\.\w/.test(await Bun.file(join(SRC, path)).text())) readers.push(path);
  }
  expect(pipelines.length).toBeGreaterThanOrEqual(4);
  expect(readers).toEqual([]);
  // The runner takes the operator's stage budgets from the pipeline's options too.
  expect(await Bun.file(join(SRC, "processing/stage-runner.ts")).text()).not.toMatch(/\bctx\.config\b/);
});

test("error responses are declared through errorResponses() alone", async () => {
  // `404: ErrorBody` spelled out again in a route is what the one helper replaced (~200 times).
  expect(await filesMatching(/\b\d{3}: ErrorBody\b/, ["http/shapes.ts"])).toEqual([]);
});

test("route modules are imported by the composition root alone (shared schemas live in a feature's model.ts)", async () => {
  expect(await filesMatching(/from "\.\.\/[a-z-]+\/([a-z-]+-)?routes\.ts"/, ["app.ts"])).toEqual([]);
});
