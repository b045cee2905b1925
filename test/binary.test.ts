/**
 * Builds dist/mediabox and runs it from an unrelated directory: the executable must carry
 * everything it needs (docs assets, migrations, the sqlite-vec extension).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
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
  expect(readdirSync(nativeCache).length).toBe(1);

  const projects = await fetch(`${server.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } });
  expect(projects.status).toBe(200);
  const docsAsset = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
  expect(docsAsset.status).toBe(200);
  expect((await docsAsset.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  const spec = await fetch(`${server.url}/api/v2/openapi.json`);
  expect(((await spec.json()) as { openapi: string }).openapi).toStartWith("3.1");

  expect(await server.stop("SIGTERM")).toBe(0);
  server = null;
});
