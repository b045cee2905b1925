/**
 * Builds dist/mediabox, copies it alone into an unrelated directory and runs it there: the
 * executable must carry everything it needs (docs assets, migrations, sqlite-vec, sharp and
 * libvips, the tesseract worker with its language data, the tfjs runtime and vision models, the
 * wasm decoders of HEIC, JPEG XL and camera RAWs).
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { textImage } from "./support/images.ts";
import { reportPdf } from "./support/documents.ts";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import sharp from "sharp";
import { buildFixtureEmbeddingModel } from "./support/embedding-model.ts";
import { heicHalves } from "./support/heic.ts";
import { dngWithSensorData, halves, jxlCodestream, jxlContainer } from "./support/photo-fixtures.ts";
import { tempDir } from "./support/server.ts";
import { waitFor } from "./support/polling.ts";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { findPostgres, startPostgres, type PostgresBinaries } from "./support/postgres.ts";
import { startS3Server } from "./support/s3-server.ts";
import { testMode } from "./support/suite-database.ts";

const root = join(import.meta.dir, "..");
const built = join(root, "dist", "mediabox");
const workDir = tempDir("mediabox-binary-");
// Alone in a directory of its own: nothing beside it, no node_modules above it.
const binary = join(workDir, "bin", "mediabox");
const nativeCache = join(workDir, "native-cache");
const env = { MEDIABOX_NATIVE_CACHE: nativeCache };
/** Every server a test starts; stopped after each test whatever happened in it. */
const servers: ServerProcess[] = [];
/** Web pages served to the binary's link crawler; stopped after each test. */
const sites: ReturnType<typeof Bun.serve>[] = [];
async function startBinary(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer([binary], { cwd: workDir, env });
  servers.push(server);
  return server;
}

/** GET as JSON; the polling loops below stay inside the key's rate limit, and a 429 waits its Retry-After. */
async function getJson<T>(url: string, headers: Record<string, string>): Promise<T> {
  for (;;) {
    const res = await fetch(url, { headers });
    if (res.status !== 429) return (await res.json()) as T;
    await Bun.sleep(1000 * Number(res.headers.get("retry-after") ?? 1));
  }
}

beforeAll(async () => {
  // Built without the checkout's models/ (a developer's fetched folders, absent in CI): a binary
  // that embeds models unpacks them when it starts, which the native-cache check below would count.
  const build = await run([process.execPath, join(root, "scripts", "build.ts")], { cwd: root, env: { MEDIABOX_MODELS_DIR: join(workDir, "no-models") } });
  if (build.exitCode !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
  // Older builds wrote media assets beside the binary; nothing may be left there.
  expect(readdirSync(join(root, "dist")).filter((f) => f.includes("assets"))).toEqual([]);
  mkdirSync(join(workDir, "bin"));
  copyFileSync(built, binary);
}, 180_000);

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop("SIGKILL")));
  for (const site of sites.splice(0)) site.stop(true);
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

test("the built executable administers and serves from any directory", async () => {
  expect(existsSync(binary)).toBe(true);
  const org = await run([binary, "orgs", "create", "Binary Co", "--tier", "ENTERPRISE"], { cwd: workDir, env });
  expect(org.exitCode).toBe(0);
  const key = (await run([binary, "keys", "create", "--org", "Binary Co"], { cwd: workDir, env })).stdout.trim();
  expect(key).toStartWith("mbx_");
  expect(existsSync(join(workDir, "data", "mediabox.db"))).toBe(true);
  // Commands that need no media code leave the embedded assets where they are (only the server and media commands unpack them).
  expect(existsSync(nativeCache) ? readdirSync(nativeCache).filter((d) => existsSync(join(nativeCache, d, "mediabox-assets"))) : []).toEqual([]);

  // A web page on loopback for the link crawl below (loopback is refused unless the policy allows it).
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () =>
      new Response(
        `<!doctype html><html><head><title>Quay works</title><meta property="og:title" content="Quay wall repairs begin"></head><body><article><h1>Quay wall repairs begin</h1>${"<p>The east quay wall, built in 1911, is being rebuilt stone by stone over the winter.</p>".repeat(8)}</article></body></html>`,
        { headers: { "content-type": "text/html; charset=utf-8" } },
      ),
  });
  sites.push(site);
  const server = await startBinary({ ...env, MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.0/8", MEDIABOX_LINK_PORTS: "any" });
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  // Bun's own head limit is raised by the arguments embedded at build time: the application answers oversized heads.
  const oversized = await fetch(`${server.url}/healthz`, { headers: { cookie: `c=${"x".repeat(200_000)}` } });
  expect(oversized.status).toBe(431);
  expect(((await oversized.json()) as { code: string }).code).toBe("HEADERS_TOO_LARGE");
  const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { status: string; checks: Record<string, { detail: string }> };
  expect(ready.status).toBe("ready");
  expect(ready.checks.vector_search!.detail).toMatch(/^sqlite-vec v/);
  // The vector scan's worker threads are entry points embedded in the binary too.
  for (const until = Date.now() + 30_000; Date.now() < until && ready.checks.vector_search!.detail.includes("starting"); await Bun.sleep(50)) {
    Object.assign(ready, await (await fetch(`${server.url}/readyz`)).json());
  }
  expect(ready.checks.vector_search!.detail).toEndWith(`in-memory scan on ${Math.min(4, cpus().length)} thread(s)`);
  // sqlite-vec, libvips and the sharp addon, each in a directory named by its content hash, and
  // the media assets, written out in the background after start. ONNX Runtime and the canvas addon
  // are written out only when first used.
  const cached = () => readdirSync(nativeCache).flatMap((d) => readdirSync(join(nativeCache, d))).filter((f) => !f.endsWith(".tmp"));
  await waitFor(() => cached().includes("mediabox-assets"), { what: "the media assets to be unpacked in the background", timeoutMs: 120_000 });
  expect(cached().map((f) => f.replace(/\.so\.[\d.]+$/, ".so")).sort()).toEqual(["libvips-cpp.so", "mediabox-assets", "sharp.node", "vec0.so"]);

  const projects = await fetch(`${server.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } });
  expect(projects.status).toBe(200);
  // The dashboard, bundled at build time and embedded.
  const dashboard = await (await fetch(`${server.url}/`)).text();
  const dashboardScript = /src="(\/app\/assets\/main-[^"]+\.js)"/.exec(dashboard)?.[1];
  expect(dashboardScript).toBeDefined();
  const mainScript = await (await fetch(`${server.url}${dashboardScript}`)).text();
  expect(mainScript.length).toBeGreaterThan(10_000);
  // The pages loaded on demand (the map) are chunks of their own, embedded beside it.
  const chunk = /import\("\.\/(chunk-[^"]+\.js)"\)/.exec(mainScript)?.[1];
  expect(chunk).toBeDefined();
  const chunkResponse = await fetch(`${server.url}/app/assets/${chunk}`);
  expect(chunkResponse.status).toBe(200);
  expect(chunkResponse.headers.get("content-type")).toContain("javascript");
  const docsAsset = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
  expect(docsAsset.status).toBe(200);
  expect((await docsAsset.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  const spec = await fetch(`${server.url}/api/v2/openapi.json`);
  expect(((await spec.json()) as { openapi: string }).openapi).toStartWith("3.1");

  // The image pipeline inside the binary: sharp variants, tesseract OCR (worker thread, wasm core
  // and language data), the tfjs models (Human for the description, MobileNetV2 embeddings).
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="200"><rect width="100%" height="100%" fill="white"/>
    <text x="40" y="120" font-family="DejaVu Sans" font-size="56" fill="black">HELLO BINARY</text></svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  const form = new FormData();
  form.append("file", new File([png], "hello.png"));
  const headers = { authorization: `Bearer ${key}` };
  const upload = await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers });
  expect(upload.status).toBe(201);
  const { image_id: id } = (await upload.json()) as { image_id: string };
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await Bun.sleep(250)) {
    if ((await getJson<{ is_terminal: boolean }>(`${server.url}/api/v2/files/uploads-status/${id}`, headers)).is_terminal) break;
  }
  const file = (await (await fetch(`${server.url}/api/v2/files/${id}`, { headers })).json()) as Record<string, unknown>;
  expect([file.variant_status, file.variant_count]).toEqual(["completed", 4]);
  expect(String(file.visible_text)).toContain("HELLO BINARY");
  expect([file.description_status, file.description_error ?? null]).toEqual(["completed", null]);
  // 200 (not 409 EMBEDDING_NOT_READY) only when the image embedding was stored.
  expect((await fetch(`${server.url}/api/v2/files/${id}/similar`, { headers })).status).toBe(200);
  /** Uploads a photo without description and returns its detail once its analysis ended. */
  const analysedPhoto = async (bytes: Uint8Array, filename: string) => {
    const form = new FormData();
    form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], filename));
    form.append("auto_describe", "false");
    const { image_id: photoId } = (await (await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers })).json()) as { image_id: string };
    for (const until = Date.now() + 60_000; Date.now() < until; await Bun.sleep(250)) {
      if ((await getJson<{ is_terminal: boolean }>(`${server.url}/api/v2/files/uploads-status/${photoId}`, headers)).is_terminal) break;
    }
    const photo = await getJson<Record<string, unknown>>(`${server.url}/api/v2/files/${photoId}`, headers);
    return [photo.variant_status, photo.format, photo.dimensions];
  };
  // HEIC through libheif's wasm build (embedded in the bundle).
  expect(await analysedPhoto(heicHalves(), "IMG_0002.HEIC")).toEqual(["completed", "heic", { width: 800, height: 400 }]);
  // JPEG XL through its wasm decoder on a thread of its own (an entry point of the binary).
  expect(await analysedPhoto(new Uint8Array(jxlContainer(await jxlCodestream(await halves(160, 120, "png")))), "next.jxl")).toEqual(["completed", "jxl", { width: 160, height: 120 }]);
  // A camera RAW developed by LibRaw's wasm build on its thread (an entry point of the binary, the wasm embedded).
  expect(await analysedPhoto(new Uint8Array(await dngWithSensorData(await halves(300, 200))), "sensor.dng")).toEqual(["completed", "dng", { width: 300, height: 200 }]);
  // A camera RAW developed by LibRaw's wasm build on its thread (an entry point of the binary, the wasm embedded).
  // The built-in text model (USE lite on its own worker entry point, model files in the assets):
  // a paraphrase sharing no word with the document finds it through the vector signal alone.
  const note = new FormData();
  note.append("file", new File(["The tenant may end this lease with sixty days written notice.\n"], "lease.txt"));
  expect((await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: note, headers })).status).toBe(201);
  type TextSearch = { results: { match: { keyword_score: number | null; vector_similarity: number | null } }[]; retrieval: { vector: boolean; vector_model: string | null } };
  let semantic: TextSearch | null = null;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await Bun.sleep(250)) {
    const res = await fetch(`${server.url}/api/v2/files/search`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ query: "renter quits the apartment contract" }) });
    if (res.status === 429) continue;
    semantic = (await res.json()) as TextSearch;
    if (semantic.retrieval.vector && semantic.results.length) break;
  }
  expect(semantic?.retrieval).toMatchObject({ vector: true, vector_model: "use-lite-sif" });
  expect(semantic?.results[0]?.match.keyword_score).toBeNull();
  expect(semantic?.results[0]?.match.vector_similarity).toBeGreaterThan(0.4);
  // A PDF through pdf.js in the document reader's child process (its in-process worker and port),
  // read into digitized pages and drawn as a page picture.
  const pdfForm = new FormData();
  pdfForm.append("file", new File([(await reportPdf()) as BlobPart], "report.pdf"));
  const { image_id: pdfId } = (await (await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: pdfForm, headers })).json()) as { image_id: string };
  for (const until = Date.now() + 90_000; Date.now() < until; await Bun.sleep(250)) {
    if ((await getJson<{ is_terminal: boolean }>(`${server.url}/api/v2/files/uploads-status/${pdfId}`, headers)).is_terminal) break;
  }
  const pdf = await getJson<Record<string, unknown>>(`${server.url}/api/v2/files/${pdfId}`, headers);
  expect([pdf.processing_status, pdf.text_extraction_status, pdf.page_count]).toEqual(["completed", "completed", 2]);
  const page = await getJson<{ elements: { type: string; content: string }[] }>(`${server.url}/api/v2/files/${pdfId}/digitization/pages/2`, headers);
  expect(page.elements.find((e) => e.type === "heading")?.content).toContain("Findings");
  const picture = await fetch(`${server.url}/api/v2/files/${pdfId}/digitization/pages/1/image?width=200&redirect=false`, { headers });
  expect(picture.status).toBe(200);
  expect(await picture.json()).toMatchObject({ width: 200, content_type: "image/webp" });
  // A video through the embedded static ffprobe and ffmpeg (unpacked on first use).
  const videoForm = new FormData();
  videoForm.append("file", new File([readFileSync(join(import.meta.dir, "fixtures", "video", "vp9.webm"))], "clip.webm"));
  const { image_id: videoId } = (await (await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: videoForm, headers })).json()) as { image_id: string };
  for (const until = Date.now() + 90_000; Date.now() < until; await Bun.sleep(250)) {
    if ((await getJson<{ is_terminal: boolean }>(`${server.url}/api/v2/files/uploads-status/${videoId}`, headers)).is_terminal) break;
  }
  const video = await getJson<Record<string, unknown>>(`${server.url}/api/v2/files/${videoId}`, headers);
  expect([video.analysis_status, video.video_codec, video.resolution]).toEqual(["completed", "vp9", "320x240"]);
  expect(String(video.thumbnail_url)).toStartWith("http");
  // A saved web page: its metadata and article are read on the page-reading thread (an entry point of the binary).
  const saved = await fetch(`${server.url}/api/v2/files/links`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ url: `http://127.0.0.1:${site.port}/quay` }) });
  expect(saved.status).toBe(201);
  const { id: linkId } = (await saved.json()) as { id: string };
  let link: Record<string, unknown> = {};
  for (const until = Date.now() + 60_000; Date.now() < until; await Bun.sleep(250)) {
    link = await getJson<Record<string, unknown>>(`${server.url}/api/v2/files/${linkId}`, headers);
    if (["completed", "failed", "blocked"].includes(String(link.crawl_status))) break;
  }
  expect([link.crawl_status, link.title]).toEqual(["completed", "Quay wall repairs begin"]);
  expect(String(link.visible_text)).toContain("rebuilt stone by stone");
  const verify = await run([binary, "models", "verify"], { cwd: workDir, env });
  expect(verify.stderr).toMatch(new RegExp(`videos: ffmpeg \\S+ \\(${nativeCache}/[0-9a-f]+/ffmpeg\\), ffprobe \\S+ \\(${nativeCache}/[0-9a-f]+/ffprobe\\)`));
  // The media assets were written out once, as one tree named by its content hash.
  const trees = readdirSync(nativeCache).filter((d) => existsSync(join(nativeCache, d, "mediabox-assets")));
  expect(trees).toHaveLength(1);
  expect(existsSync(join(nativeCache, trees[0]!, "mediabox-assets", "tesseract", "tesseract-worker.js"))).toBe(true);
  expect(await server.stop("SIGTERM")).toBe(0);

  // Restarted to prepare a few common words: the word lists are read from the binary's embedded assets.
  const again = await startBinary({ ...env, MEDIABOX_TEXT_VOCABULARY_WORDS: "40" });
  const prepared = async () => (await (await fetch(`${again.url}/metrics`)).text()).includes('mediabox_text_model_words_computed{purpose="vocabulary"} 40');
  for (const until = Date.now() + 90_000; Date.now() < until && !(await prepared()); await Bun.sleep(250));
  expect(await prepared()).toBe(true);
  expect(await again.stop("SIGTERM")).toBe(0);
}, 240_000);

// transformers.js with ONNX Runtime (libonnxruntime and its addon are embedded like sharp's):
// document chunks and the search query are embedded with the fixture sentence model.
test("the built executable runs ONNX Runtime models from the models directory", async () => {
  const modelsDir = join(workDir, "models");
  await buildFixtureEmbeddingModel(modelsDir);
  // A second OCR language from the models directory (German, for the umlauts below).
  mkdirSync(join(modelsDir, "tesseract"));
  const deu = join(dirname(require.resolve("@tesseract.js-data/deu/package.json")), "4.0.0_best_int", "deu.traineddata.gz");
  copyFileSync(deu, join(modelsDir, "tesseract", "deu.traineddata.gz"));
  // Only folders the manifest vouches for may load: the binary writes and verifies it.
  // A data directory of its own: the first test's server was killed with its files still being
  // analysed, and a server on that directory resumes them first (a camera RAW's development kept
  // this test's one document waiting past its deadline).
  const docsEnv = { ...env, MEDIABOX_DATA_DIR: join(workDir, "docs-data"), MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_MODELS_REQUIRE_MANIFEST: "true", MEDIABOX_OCR_LANGUAGES: "eng+deu", MEDIABOX_TEXT_EMBEDDING_MODEL: "all-MiniLM-L6-v2" };
  expect((await run([binary, "models", "manifest"], { cwd: workDir, env: docsEnv })).exitCode).toBe(0);
  const verified = await run([binary, "models", "verify"], { cwd: workDir, env: docsEnv });
  expect([verified.exitCode, verified.stdout]).toEqual([0, "all-MiniLM-L6-v2\ttext_embedding\tverified\t-\ntesseract\tother\tverified\t-\n"]);
  expect((await run([binary, "orgs", "create", "Docs Co", "--tier", "ENTERPRISE"], { cwd: workDir, env: docsEnv })).exitCode).toBe(0);
  const key = (await run([binary, "keys", "create", "--org", "Docs Co"], { cwd: workDir, env: docsEnv })).stdout.trim();
  const server = await startBinary(docsEnv);
  const headers = { authorization: `Bearer ${key}` };
  const form = new FormData();
  form.append("file", new File(["# Pump manual\n\nThe VX-4471 flange leak is fixed by tightening the bolts.\n"], "manual.md"));
  expect((await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers })).status).toBe(201);
  type Search = { results: { match: { vector_rank: number | null } }[]; retrieval: { vector: boolean; vector_unavailable_reason: string | null } };
  let search: Search | null = null;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await Bun.sleep(250)) {
    const res = await fetch(`${server.url}/api/v2/files/search`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ query: "flange leak" }) });
    search = (await res.json()) as Search;
    if (search.results[0]?.match.vector_rank) break;
  }
  expect(search?.retrieval).toMatchObject({ vector: true, vector_unavailable_reason: null });
  expect(search?.results[0]?.match.vector_rank).toBe(1);

  const letter = new FormData();
  letter.append("file", new File([(await textImage(["Übergabe an Jürgen"])) as Uint8Array<ArrayBuffer>], "brief.png"));
  letter.append("auto_describe", "false");
  const { image_id: letterId } = (await (await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: letter, headers })).json()) as { image_id: string };
  let visible = "";
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && !visible; await Bun.sleep(250)) {
    visible = String((await getJson<{ visible_text: string | null }>(`${server.url}/api/v2/files/${letterId}`, headers)).visible_text ?? "");
  }
  expect(visible).toContain("Übergabe an Jürgen");
  expect(await server.stop("SIGTERM")).toBe(0);
}, 150_000);

// The README's "Scaling out" recipe with the built executable: its own PostgreSQL and bucket,
// whatever the pass (once is enough: it runs in the SQLite pass only).
const postgres = findPostgres();
const noCluster = "missing" in postgres ? postgres.missing : postgres.vector ? null : `the PostgreSQL in ${postgres.bin} has no pgvector`;
test.skipIf(testMode() !== "sqlite" || noCluster !== null)("the built executable as an api process and a worker process over PostgreSQL and one bucket", async () => {
  const pg = await startPostgres(postgres as PostgresBinaries);
  const s3 = await startS3Server();
  try {
    const database = await pg.createDatabase("binary_shared");
    await s3.allowBrowserUploads(s3.bucket);
    const shared = { ...env, ...s3.env, MEDIABOX_DATABASE: database, MEDIABOX_CLOUD_TOKEN_KEY: Buffer.alloc(32, 3).toString("base64") };
    const as = (role: string) => ({ ...shared, MEDIABOX_ROLE: role, MEDIABOX_DATA_DIR: join(workDir, `shared-${role}`) });
    expect((await run([binary, "orgs", "create", "Shared Co", "--tier", "ENTERPRISE"], { cwd: workDir, env: as("api") })).exitCode).toBe(0);
    const key = (await run([binary, "keys", "create", "--org", "Shared Co"], { cwd: workDir, env: as("api") })).stdout.trim();
    expect(key).toStartWith("mbx_");
    const api = await startBinary(as("api"));
    const worker = await startBinary(as("worker"));
    const headers = { authorization: `Bearer ${key}` };
    // The api takes the upload and runs no job; the worker analyses it from the bucket.
    const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: "#3a7" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new File([png], "green.png"));
    form.append("auto_describe", "false");
    const upload = await fetch(`${api.url}/api/v2/files/upload`, { method: "POST", body: form, headers });
    expect(upload.status).toBe(201);
    const { image_id: id } = (await upload.json()) as { image_id: string };
    await waitFor(async () => (await getJson<{ is_terminal: boolean }>(`${api.url}/api/v2/files/uploads-status/${id}`, headers)).is_terminal, { what: "the worker to analyse the upload", timeoutMs: 120_000 });
    const file = await getJson<Record<string, unknown>>(`${api.url}/api/v2/files/${id}`, headers);
    expect([file.variant_status, file.variant_count, file.dimensions]).toEqual(["completed", 4, { width: 320, height: 200 }]);
    // The original's download is a URL of the bucket, and its bytes are the upload's.
    const download = await fetch(`${api.url}/api/v2/files/${id}/download`, { headers, redirect: "manual" });
    expect(download.status).toBe(302);
    const location = download.headers.get("location")!;
    expect(location).toStartWith(s3.endpoint);
    expect(new Uint8Array(await (await fetch(location)).arrayBuffer())).toEqual(new Uint8Array(png));
    // The worker answers probes, not the API.
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/api/v2/projects`, { headers })).status).toBe(404);
  } finally {
    await Promise.all(servers.splice(0).map((s) => s.stop("SIGKILL")));
    await s3.close();
    await pg.stop();
  }
}, 300_000);
