/**
 * The server process as an operator meets it: one server per port and per data directory (a
 * second `mediabox serve` fails at once with one clear line and exit code 1, touching nothing of
 * the first; kill -9 leaves no lock behind), `npm start` that stops on SIGTERM, `GET /` that leads
 * a browser to the docs.
 */
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { tempDir } from "./support/server.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const servers: ServerProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop("SIGKILL")));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = tempDir("mediabox-single-");
  dirs.push(dir);
  return dir;
}

async function serve(dir: string, port = "0"): Promise<ServerProcess> {
  const server = await spawnServer([process.execPath, MAIN, "serve", "--data-dir", dir, "--port", port]);
  servers.push(server);
  return server;
}

test("a second server on a port in use exits 1 with one line, and the first keeps serving", async () => {
  const first = await serve(dataDir());
  const port = new URL(first.url).port;
  const second = await run([process.execPath, MAIN, "serve", "--data-dir", dataDir(), "--port", port]);
  expect(second.exitCode).toBe(1);
  expect(second.stderr).toContain(`cannot listen on 0.0.0.0:${port}: the port is already in use`);
  expect(second.stderr.trim().split("\n")).toHaveLength(1);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
});

test("a second server on a data directory in use exits 1 naming the holder; kill -9 leaves no lock", async () => {
  const dir = dataDir();
  const first = await serve(dir);
  const second = await run([process.execPath, MAIN, "serve", "--data-dir", dir, "--port", "0"]);
  expect(second.exitCode).toBe(1);
  expect(second.stderr).toContain(`the data directory ${dir} is in use by mediabox pid ${first.proc.pid}`);
  expect(second.stderr.trim().split("\n")).toHaveLength(1);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

  await first.stop("SIGKILL");
  const third = await serve(dir);
  expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
});

test("GET / serves the dashboard page and its assets without spending the anonymous budget", async () => {
  const server = await serve(dataDir());
  for (let i = 0; i < 8; i++) {
    const res = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await res.text();
    const script = /src="(\/app\/assets\/main-[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${server.url}${script}`);
    expect([asset.status, asset.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect(asset.headers.get("cache-control")).toContain("immutable");
  }
  expect((await fetch(`${server.url}/app/assets/nothing.js`)).status).toBe(404);
});

test("npm start hands SIGTERM to the server, which stops and frees its port", async () => {
  const dir = dataDir();
  const npm = Bun.which("npm");
  if (!npm) throw new Error("npm is needed for this test");
  const server = await spawnServer([npm, "start", "--silent"], { env: { MEDIABOX_DATA_DIR: dir, MEDIABOX_PORT: "0" }, cwd: join(import.meta.dir, "..") });
  servers.push(server);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(await server.stop("SIGTERM")).toBe(0);
  // Nothing listens any more: the port refuses connections.
  await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
});
