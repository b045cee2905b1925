/**
 * Hostile requests against every route of the OpenAPI document, on a real server.
 *
 *   bun scripts/bench/fuzz.ts          (or: npm run bench:fuzz)
 *
 * Starts `src/main.ts serve` in a child process with a CUSTOM-tier key (no rate limit), reads its
 * OpenAPI document, and sends each operation the shapes an attacker or a careless client sends:
 * JSON nested 10,000 and 100,000 deep, a 1 MiB array, an object of 50,000 keys, 20-digit and
 * 400-digit numbers and NaN-like strings in every integer field and query parameter, a 1 MiB
 * string in every string field, lone surrogates, `__proto__` keys, a body past the cap in chunks,
 * the wrong content type, the wrong types everywhere; each once anonymous and once with the key.
 * Meanwhile it polls /healthz every ~20 ms and samples the RSS of the server and its children.
 * Prints per shape: requests, 5xx count, slowest answer, the main thread's CPU per request (the
 * event loop's cost, which a loaded machine does not inflate the way it inflates latency); then
 * overall 5xx, the longest stall, /healthz max latency and peak RSS with children. Targets (issue 36): 0 5xx, /healthz max < 1 s, peak RSS < 1.5 GB.
 * MEDIABOX_BENCH_ONLY=<substring> runs the shapes whose name contains it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { residentBytes } from "../../src/documents/process-memory.ts";
import { run, spawnServer } from "../../test/support/process.ts";
import { cpuSeconds } from "./process-stats.ts";

const MiB = 1024 * 1024;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-fuzz-"));
const dataDir = join(root, "data");
const ID = "00000000-0000-4000-8000-000000000000";

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  [key: string]: unknown;
}
interface Operation {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface Route {
  method: string;
  path: string;
  op: Operation;
  json: Schema | null;
}
interface Probe {
  path: string;
  query?: string;
  body?: BodyInit;
  contentType?: string;
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const HUGE_NUMBERS = ["99999999999999999999", "-99999999999999999999", "1e400", "9".repeat(400), "0.5", "NaN", "Infinity", "0x10", ""];

function typesOf(schema: Schema | undefined): string[] {
  if (!schema) return [];
  return [schema.type ?? [], ...(schema.anyOf ?? []).map(typesOf)].flat() as string[];
}

/** A body where every field of `schema` is replaced by `value` (the field's own type ignored). */
function everyField(schema: Schema | null, value: (types: string[]) => unknown): Record<string, unknown> {
  const object = (schema?.anyOf ?? [schema]).find((s) => s?.properties) ?? schema;
  const body: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(object?.properties ?? {})) body[name] = value(typesOf(field));
  return body;
}

/** The shapes, each a function from a route to the requests it sends. */
const SHAPES: Record<string, (route: Route) => Probe[]> = {
  "JSON nested 10,000 deep": (r) => [{ path: r.path, body: nested(10_000), contentType: "application/json" }],
  "JSON nested 100,000 deep": (r) => [{ path: r.path, body: nested(100_000), contentType: "application/json" }],
  "a deep array in every field": (r) => [{ path: r.path, body: JSON.stringify(everyField(r.json, () => 0)).replaceAll(":0", `:${nested(20_000)}`), contentType: "application/json" }],
  "a 1 MiB array of numbers": (r) => [{ path: r.path, body: `[${"1,".repeat(MiB / 2 - 2)}1]`, contentType: "application/json" }],
  "an object of 50,000 keys": (r) => [{ path: r.path, body: JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))), contentType: "application/json" }],
  "huge numbers in every field": (r) =>
    HUGE_NUMBERS.slice(0, 4).map((n) => ({
      path: r.path,
      body: JSON.stringify(everyField(r.json, (types) => (types.includes("integer") || types.includes("number") ? "__N__" : "x"))).replaceAll('"__N__"', n),
      contentType: "application/json",
    })),
  "a 1 MiB string in every field": (r) => [{ path: r.path, body: JSON.stringify(everyField(r.json, () => "x".repeat(MiB - 200))), contentType: "application/json" }],
  "wrong types everywhere": (r) =>
    [[], {}, "s", true, null].map((v) => ({ path: r.path, body: JSON.stringify(everyField(r.json, () => v)), contentType: "application/json" })),
  "lone surrogates and __proto__": (r) => [
    { path: r.path, body: `{"__proto__":{"admin":true},"constructor":{"prototype":{}},"name":"\\ud800","email":"\\udfff"}`, contentType: "application/json" },
  ],
  "a chunked body past the cap": (r) => [
    {
      path: r.path,
      contentType: "application/json",
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 3; i++) c.enqueue(new Uint8Array(MiB).fill(0x20));
          c.close();
        },
      }),
    },
  ],
  "the wrong content type": (r) => [
    { path: r.path, body: nested(10_000), contentType: "text/plain" },
    { path: r.path, body: "a[b][c][d]=1&".repeat(10_000), contentType: "application/x-www-form-urlencoded" },
    { path: r.path, body: "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--\r\n", contentType: "multipart/form-data; boundary=x" },
  ],
  "huge numbers in every query parameter": (r) =>
    (r.op.parameters ?? []).filter((p) => p.in === "query").flatMap((p) => HUGE_NUMBERS.map((n) => ({ path: r.path, query: `${p.name}=${encodeURIComponent(n)}` }))),
  "a parameter repeated 1,000 times": (r) =>
    (r.op.parameters ?? []).filter((p) => p.in === "query").slice(0, 3).map((p) => ({ path: r.path, query: Array.from({ length: 1000 }, (_, i) => `${p.name}=${i}`).join("&") })),
  "path parameters out of range": (r) =>
    r.path.includes(ID) || /\/1(\/|$)/.test(r.path)
      ? ["99999999999999999999", "-1", "%00", "..%2F..%2Fetc", "x".repeat(5000)].map((v) => ({ path: r.path.replace(ID, v).replace(/\/1(\/|$)/, `/${v}$1`) }))
      : [],
};

function routes(doc: { paths: Record<string, Record<string, Operation>> }): Route[] {
  const out: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const path = template.replace(/\{[^}]+\}/g, (name) => (name.includes("number") ? "1" : ID));
      out.push({ method: method.toUpperCase(), path, op, json: op.requestBody?.content?.["application/json"]?.schema ?? null });
    }
  }
  return out;
}

function sampleRss(pid: number): number {
  let total = residentBytes(pid) ?? 0;
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").trim().split(/\s+/).filter(Boolean)) total += residentBytes(Number(child)) ?? 0;
  } catch {
    // The process just exited.
  }
  return total;
}

async function main() {
  const only = process.env.MEDIABOX_BENCH_ONLY;
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "fuzz", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "fuzz")).stdout.trim();
  const server = await spawnServer([process.execPath, "--max-http-header-size=262144", MAIN, "serve"], { env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info" }, timeoutMs: 300_000 });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, sampleRss(server.proc.pid))), 20);
  const health: number[] = [];
  let done = false;
  const prober = (async () => {
    while (!done) {
      const started = performance.now();
      await (await fetch(`${server.url}/healthz`)).arrayBuffer();
      health.push(performance.now() - started);
      await Bun.sleep(Math.max(0, 20 - (performance.now() - started)));
    }
  })();
  let total5xx = 0;
  let maxMainMs = 0;
  let totalRequests = 0;
  const failures: string[] = [];
  try {
    const doc = (await (await fetch(`${server.url}/api/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const all = routes(doc);
    console.log(`${all.length} operations in the OpenAPI document`);
    for (const [shape, probes] of Object.entries(SHAPES)) {
      if (only && !shape.includes(only)) continue;
      let count = 0;
      let fivexx = 0;
      let slowest = 0;
      let slowestAt = "";
      // Main-thread CPU per request: what a request costs the event loop, whatever else the machine runs.
      let heaviest = 0;
      let heaviestAt = "";
      const mainBefore = cpuSeconds(server.proc.pid).main;
      for (const route of all) {
        // fetch sends no body with these (the datasets routes answer every method, TRACE included).
        const bodyless = ["GET", "HEAD", "TRACE", "CONNECT"].includes(route.method);
        for (const probe of probes(route)) {
          if (bodyless && probe.body !== undefined) continue;
          if (!bodyless && probe.body === undefined && probe.query === undefined && !shape.startsWith("path")) continue;
          for (const auth of [false, true]) {
            const url = `${server.url}${probe.path}${probe.query ? `?${probe.query}` : ""}`;
            const headers: Record<string, string> = { ...(probe.contentType ? { "content-type": probe.contentType } : {}), ...(auth ? { authorization: `Bearer ${key}` } : {}) };
            const started = performance.now();
            const mainAtStart = cpuSeconds(server.proc.pid).main;
            let status = 0;
            try {
              // A stream body can be sent once: anonymous and authenticated calls each get their own.
              const body = probe.body instanceof ReadableStream ? (SHAPES[shape]!(route)[0]!.body as BodyInit) : probe.body;
              const res = await fetch(url, { method: route.method, headers, ...(body !== undefined ? { body } : {}), redirect: "manual" });
              await res.arrayBuffer();
              status = res.status;
            } catch (err) {
              // The connection failed: the server dropped it or died (a client-side refusal is a bug here).
              status = 599;
              if (failures.length < 40) failures.push(`${shape}: ${route.method} ${probe.path}: ${String(err)}`);
            }
            const ms = performance.now() - started;
            const mainMs = (cpuSeconds(server.proc.pid).main - mainAtStart) * 1000;
            if (mainMs > heaviest) {
              heaviest = mainMs;
              heaviestAt = `${route.method} ${probe.path}`;
            }
            count++;
            if (status >= 500) {
              fivexx++;
              if (failures.length < 40) failures.push(`${shape}: ${route.method} ${probe.path}${probe.query ? `?${probe.query.slice(0, 60)}` : ""} -> ${status}`);
            }
            if (ms > slowest) {
              slowest = ms;
              slowestAt = `${route.method} ${probe.path}`;
            }
          }
        }
      }
      total5xx += fivexx;
      totalRequests += count;
      maxMainMs = Math.max(maxMainMs, heaviest);
      const mainMean = count ? ((cpuSeconds(server.proc.pid).main - mainBefore) * 1000) / count : 0;
      console.log(
        `${shape}: ${count} requests, ${fivexx} 5xx, slowest answer ${slowest.toFixed(0)} ms (${slowestAt}); ` +
          `main-thread CPU mean ${mainMean.toFixed(1)} ms, max ${heaviest.toFixed(0)} ms (${heaviestAt || "-"})`,
      );
    }
  } finally {
    done = true;
    await prober;
    clearInterval(sampler);
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
  for (const f of failures) console.log(`  ${f}`);
  const sorted = [...health].sort((a, b) => a - b);
  const maxHealth = sorted.at(-1) ?? 0;
  const p99 = sorted[Math.floor(0.99 * (sorted.length - 1))] ?? 0;
  console.log(
    `fuzz: ${totalRequests} requests, ${total5xx} 5xx; longest event-loop stall by one request ~${maxMainMs.toFixed(0)} ms of main-thread CPU (10 ms resolution); /healthz p99 ${p99.toFixed(0)} ms, max ${maxHealth.toFixed(0)} ms (${sorted.length} probes); peak RSS with children ${Math.round(peakRss / MiB)} MB` +
      ` (targets: 0 5xx, max < 1000 ms, < 1536 MB: ${total5xx === 0 && maxHealth < 1000 && peakRss < 1536 * MiB ? "met" : "NOT met"})`,
  );
}

await main();
