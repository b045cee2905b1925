/**
 * Builds dist/mediabox and runs it from an unrelated directory: the executable must carry
 * everything it needs (docs assets, migrations, sqlite-vec, sharp and libvips) and find the media
 * packages in mediabox-assets/ beside it (OCR, vision models).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { tempDir } from "./support/server.ts";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";

const root = join(import.meta.dir, "..");
const binary = join(root, "dist", "mediabox");
const workDir = tempDir("mediabox-binary-");
const nativeCache = join(workDir, "native-cache");
const env = { MEDIABOX_NATIVE_CACHE: nativeCache };
let server: ServerProcess | null = null;

beforeAll(async () => {
  const build = await run([process.execPath, join(root, "scripts", "build.ts")], { cwd: root });
  if (build.exitCode !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
}, 180_000);

afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(workDir, { recursive: true, force: true });
});

test("the built executable administers and serves from any directory", async () => {
  expect(existsSync(binary)).toBe(true);
  const org = await run([binary, "orgs", "create", "Binary Co"], { cwd: workDir, env });
  expect(org.exitCode).toBe(0);
  const key = (await run([binary, "keys", "create", "--org", "Binary Co"], { cwd: workDir, env })).stdout.trim();
  expect(key).toStartWith("mbx_");
  expect(existsSync(join(workDir, "data", "mediabox.db"))).toBe(true);

  server = await spawnServer([binary], { cwd: workDir, env });
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { status: string; checks: Record<string, { detail: string }> };
  expect(ready.status).toBe("ready");
  expect(ready.checks.vector_search!.detail).toMatch(/^sqlite-vec v/);
  // sqlite-vec, libvips and the sharp addon, each in a directory named by its content hash.
  expect(readdirSync(nativeCache).length).toBe(3);

  const projects = await fetch(`${server.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } });
  expect(projects.status).toBe(200);
  const docsAsset = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
  expect(docsAsset.status).toBe(200);
  expect((await docsAsset.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  const spec = await fetch(`${server.url}/api/v2/openapi.json`);
  expect(((await spec.json()) as { openapi: string }).openapi).toStartWith("3.1");

  // The image pipeline inside the binary: sharp variants, tesseract OCR (worker thread and
  // language data from mediabox-assets), the tfjs models and the description.
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="200"><rect width="100%" height="100%" fill="white"/>
    <text x="40" y="120" font-family="DejaVu Sans" font-size="56" fill="black">HELLO BINARY</text></svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  const form = new FormData();
  form.append("file", new File([png], "hello.png"));
  const headers = { authorization: `Bearer ${key}` };
  const uploaded = (await (await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers })).json()) as { image_id: string };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const status = (await (await fetch(`${server.url}/api/v2/files/uploads-status/${uploaded.image_id}`, { headers })).json()) as { is_terminal: boolean };
    if (status.is_terminal) break;
    await Bun.sleep(100);
  }
  const file = (await (await fetch(`${server.url}/api/v2/files/${uploaded.image_id}`, { headers })).json()) as Record<string, unknown>;
  expect([file.variant_status, file.variant_count]).toEqual(["completed", 4]);
  expect(String(file.visible_text)).toContain("HELLO BINARY");
  expect(file.description_status).toBe("completed");

  expect(await server.stop("SIGTERM")).toBe(0);
  server = null;
}, 120_000);
