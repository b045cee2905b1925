/**
 * Every processing stage has a time budget, and nothing a file does stalls the appliance.
 * Through real HTTP: a stage past its budget fails that file for good with the catalogue's
 * message while the next file is processed; hostile pages at the page cap (deep nesting,
 * hundreds of thousands of links or images) are crawled or fail with a reason, never left
 * crawling; and a real server process told to stop (SIGTERM) while such files are processed
 * exits within its grace period, its document reader with it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { join } from "node:path";
import { residentBytes } from "../src/documents/process-memory.ts";
import { FAILURES } from "../src/errors.ts";
import { oneLineText } from "./support/pathological-texts.ts";
import { pollApi, waitFor } from "./support/polling.ts";
import { readerChildOf, run, spawnServer } from "./support/process.ts";
import { engineEnvironment } from "./support/suite-database.ts";
import { ApiClient, startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";

const LOOPBACK = { MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.0/8", MEDIABOX_LINK_PORTS: "any" };
const MiB = 1024 * 1024;
/** Generous: only a hang should reach it. */
const TIMEOUT = 240_000;

const servers: TestServer[] = [];
const sites: Server<unknown>[] = [];
const held: (() => void)[] = [];
afterEach(async () => {
  for (const release of held.splice(0)) release();
  for (const site of sites.splice(0)) await site.stop(true);
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function mediabox(env: Record<string, string>): Promise<{ server: TestServer; owner: Tenant }> {
  const server = await startTestServer({ env });
  servers.push(server);
  return { server, owner: await server.tenant({ tier: "CUSTOM" }) };
}

/** A web site on loopback; unknown paths are 404. */
function site(route: (path: string) => Response | Promise<Response> | undefined): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (request) => (await route(new URL(request.url).pathname)) ?? new Response("not found", { status: 404 }) });
  sites.push(server);
  return `http://127.0.0.1:${server.port}`;
}

const html = (body: string) => new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
const wrap = (body: string) => `<!DOCTYPE html><html><head><title>Hostile</title></head><body>${body}</body></html>`;
const repeated = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

async function saveLink(owner: Tenant, url: string): Promise<string> {
  const res = await owner.api.post("/files/links", { url });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function crawled(owner: Tenant, id: string) {
  // The crawl's end is written by its stage, the file's processing status after the stage runner
  // returns: wait for both.
  const ended = (body: Record<string, unknown>) =>
    ["completed", "failed", "blocked"].includes(body.crawl_status as string) && ["stored", "completed", "failed"].includes(body.processing_status as string);
  const res = await pollApi(owner, `/files/${id}`, (r) => r.status === 200 && ended(r.body), {
    what: `link ${id} to be crawled`,
    timeoutMs: TIMEOUT,
  });
  return res.body;
}

const ARTICLE = `<article><h1>Tidal gates</h1>${"<p>The northern harbour is protected by a row of hinged tidal gates that lie flat on the seabed in calm weather.</p>".repeat(12)}</article>`;

describe("stage budgets", () => {
  test("a stage past its budget fails that file for good with the catalogue's message; the next file is processed", async () => {
    const { promise: never, resolve: release } = Promise.withResolvers<void>();
    held.push(release);
    const origin = site((path) => {
      if (path === "/hang") return never.then(() => html(wrap("too late")));
      if (path === "/article") return html(wrap(ARTICLE));
      return undefined;
    });
    // The fetch's own deadline is far away: only the stage's budget can stop it.
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_STAGE_BUDGETS: "link.fetch=2", MEDIABOX_LINK_TIMEOUT_SECONDS: "120" });
    const hung = await saveLink(owner, `${origin}/hang`);
    const file = await crawled(owner, hung);
    const message = FAILURES.stageTimedOut("fetch", 2000);
    expect(file).toMatchObject({ crawl_status: "failed", crawl_error: message, processing_status: "failed" });
    const jobId = (await owner.api.get(`/files/uploads-status/${hung}`)).body.processing_ids[0];
    // The job ends after the file's status is written.
    const job = await pollApi(owner, `/job/${jobId}`, (r) => r.body.status !== "processing" && r.body.status !== "pending", { what: `job ${jobId} to end` });
    expect(job.body).toMatchObject({ status: "failed", attempts: 1, error: message });
    const ok = await saveLink(owner, `${origin}/article`);
    expect(await crawled(owner, ok)).toMatchObject({ crawl_status: "completed", processing_status: "completed" });
  }, TIMEOUT);
});

describe("hostile pages at the page cap", () => {
  test("deep nesting, 100,000s of links or images: crawled (or failed with a reason), never left crawling; a normal page after them is crawled", async () => {
    const cap = 2 * MiB;
    const pages: Record<string, string> = {
      "/nested": wrap("<div>".repeat(cap / 5)),
      "/nested-inline": wrap("<b><i>".repeat(cap / 6)),
      "/links": wrap(repeated('<a href="/x">y</a> ', cap)),
      "/images": wrap(repeated('<img src="/i.png" alt="a">', cap)),
      "/one-word": wrap(`<p>${"a".repeat(cap)}</p>`),
      "/unclosed-link-tags": repeated("<link ", cap),
    };
    const origin = site((path) => (pages[path] ? html(pages[path]!) : path === "/article" ? html(wrap(ARTICLE)) : undefined));
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_MAX_IMAGES: "0" });
    const ids = new Map<string, string>();
    for (const path of Object.keys(pages)) ids.set(path, await saveLink(owner, `${origin}${path}`));
    const normal = await saveLink(owner, `${origin}/article`);
    for (const [path, id] of ids) {
      const file = await crawled(owner, id);
      // The page itself was read; a stage that could not cope says why in the file's warnings.
      expect({ path, crawl: file.crawl_status }).toEqual({ path, crawl: "completed" });
    }
    expect(await crawled(owner, normal)).toMatchObject({ crawl_status: "completed", processing_status: "completed" });
  }, TIMEOUT * 2);
});

describe("stopping", () => {
  test("SIGTERM while pathological files are processed: the server and its reader exit within the grace period", async () => {
    const dataDir = tempDir();
    const main = join(import.meta.dir, "..", "src", "main.ts");
    // The CLI and the server use this run's engine (PostgreSQL: the data directory's database).
    const engineEnv = await engineEnvironment(dataDir);
    const cli = (...args: string[]) => run([process.execPath, main, ...args, "--data-dir", dataDir], { env: engineEnv });
    expect((await cli("orgs", "create", "stop", "--tier", "CUSTOM")).exitCode).toBe(0);
    const key = (await cli("keys", "create", "--org", "stop")).stdout.trim().split("\n")[0]!.trim();
    const graceSeconds = 10;
    const server = await spawnServer([process.execPath, main, "serve"], {
      env: { ...engineEnv, MEDIABOX_DATA_DIR: dataDir, MEDIABOX_SHUTDOWN_GRACE_SECONDS: String(graceSeconds) },
    });
    let exited: number | null = null;
    void server.proc.exited.then((code) => (exited = code));
    try {
      const api = new ApiClient(server.url, key);
      const texts = [oneLineText(), new TextEncoder().encode(repeated("a ", 10 * MiB)), new TextEncoder().encode(repeated("ABCD\n", 1_000_000))];
      const ids: string[] = [];
      for (const [i, bytes] of texts.entries()) {
        const form = new FormData();
        form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], `pathological-${i}.txt`));
        const res = await api.form("/files/upload", form);
        expect(res.status).toBe(201);
        ids.push(res.body.image_id);
      }
      // Processing has begun (the reader process is reading) before the signal.
      await waitFor(async () => (await api.get(`/files/${ids[0]}/processing-status`)).body.processing_status === "processing", { what: "processing to start" });
      const reader = readerChildOf(server.proc.pid);
      const signalled = performance.now();
      server.proc.kill("SIGTERM");
      await waitFor(() => exited !== null, { what: "the server to exit", timeoutMs: (graceSeconds + 20) * 1000, intervalMs: 50 });
      const seconds = (performance.now() - signalled) / 1000;
      // The grace period, plus what a busy machine adds to starting the exit.
      expect(seconds).toBeLessThan(graceSeconds + 5);
      if (reader !== null) await waitFor(() => residentBytes(reader) === null, { what: "the reader process to exit" });
    } finally {
      if (exited === null) server.proc.kill("SIGKILL");
      await server.proc.exited;
    }
  }, TIMEOUT);
});
