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
 *
 * Also: bodies the schema accepts with every number at its bounds and a 20-digit number in each
 * numeric field wherever it nests, extreme dates, invalid UTF-8 in bodies, queries and paths, and
 * the values the schemas leave to the handlers (rule conditions, bbox, camera filters); path
 * parameters name real resources (a file, folder, rule, webhook, schema) where the route does
 * not delete them. Every answer of 400 and above must be the JSON envelope with `detail` and
 * show no absolute path, stack or HTML; the findings are listed. Then a pass checks that
 * credentials and roles are checked before the body: anonymous, a view-only key, a viewer's and
 * a member's session each send every write route a wrong body and a valid one; a 400 for the
 * wrong body where the valid one gets 401/403 is a finding.
 * MEDIABOX_BENCH_ONLY=<substring> runs the shapes whose name contains it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { residentBytes } from "../../src/documents/process-memory.ts";
import { RUNTIME_HEAD_BYTES, RUNTIME_HEAD_FLAG } from "../../src/http/head-limit.ts";
import { run, spawnServer } from "../../test/support/process.ts";
import { boundsOf, dateLeaf, FUZZ_ID as ID, leafSchema, leaves, numericLeaf, typesOf, validValue, withRaw, type Schema } from "./fuzz-schema.ts";
import { cpuSeconds } from "./process-stats.ts";

const MiB = 1024 * 1024;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-fuzz-"));
const dataDir = join(root, "data");

interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}
interface Route {
  method: string;
  template: string;
  path: string;
  op: Operation;
  json: Schema | null;
}
interface Probe {
  path: string;
  query?: string;
  body?: BodyInit;
  contentType?: string;
  headers?: Record<string, string>;
}
interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const HUGE_NUMBERS = ["99999999999999999999", "-99999999999999999999", "1e400", "9".repeat(400), "0.5", "NaN", "Infinity", "0x10", ""];
const EXTREME_DATES = ["99999-12-31T00:00:00Z", "-271821-04-20", "0000-00-00", "2024-02-30", "275760-09-14T00:00:00Z", "1e20", "99999999999999999999"];
const json = (r: Route, body: string): Probe => ({ path: r.path, body, contentType: "application/json" });
const queryParams = (r: Route) => (r.op.parameters ?? []).filter((p) => p.in === "query");
const validBody = (r: Route) => (r.json ? validValue(r.json) : {});

/** A body where every top-level field of `schema` is replaced by `value` (the field's own type ignored). */
function everyField(schema: Schema | null, value: (types: string[]) => unknown): Record<string, unknown> {
  const object = (schema?.anyOf ?? [schema]).find((s) => s?.properties) ?? schema;
  const body: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(object?.properties ?? {})) body[name] = value(typesOf(field));
  return body;
}

/** Bytes that are not UTF-8: a lone continuation byte, an overlong slash, a truncated sequence, 0xFF. */
const INVALID_UTF8 = new Uint8Array([0x80, 0xc0, 0xaf, 0xe2, 0x82, 0xff, 0xfe]);
function invalidUtf8Body(r: Route): Uint8Array<ArrayBuffer> {
  const body = validBody(r);
  const text = JSON.stringify(body && typeof body === "object" && !Array.isArray(body) && Object.keys(body).length ? body : { name: "x" });
  // Every string value gets the bytes in the middle of its quotes.
  const parts = text.split('"x');
  const chunks: Uint8Array[] = [];
  parts.forEach((part, i) => {
    if (i > 0) chunks.push(new TextEncoder().encode('"'), INVALID_UTF8, new TextEncoder().encode("x"));
    chunks.push(new TextEncoder().encode(part));
  });
  return Uint8Array.from(chunks.flatMap((c) => [...c]));
}

/**
 * Values the schemas leave to the handlers (typed as strings or open objects there), by route:
 * rule conditions and actions, the map's bounding box, the camera and date filters.
 */
const HANDLER_CHECKED: Record<string, (path: string) => Probe[]> = {
  "POST /api/v2/rules": rulesBodies,
  "POST /api/v2/rules/dry-run": rulesBodies,
  "PATCH /api/v2/rules/{rule_id}": rulesBodies,
  "GET /api/v2/files": filterQueries,
  "GET /api/v2/files/locations": (path) => [...filterQueries(path), ...["0", "-1", "99999999999999999999", "1e400"].map((zoom) => ({ path, query: `zoom=${zoom}&bbox=-180,-90,180,90` }))],
  "GET /api/v2/files/timeline": filterQueries,
};
function rulesBodies(path: string): Probe[] {
  const numbers = ["99999999999999999999", "-99999999999999999999", "1e308", "-1e308", "5e-324", "1e400", '"1e400"', "null", "[]", "{}"];
  const fields = ["size_bytes", "page_count", "duration_seconds", "people_count"];
  const condition = (raw: string, field: string, op = "gt") => `{"field":"${field}","op":"${op}","value":${raw}}`;
  const body = (conditions: string, actions = '[{"type":"add_tags","tags":["x"]}]') =>
    `{"name":"fuzz ${Math.random().toString(36).slice(2)}","conditions":[${conditions}],"actions":${actions},"position":1000000}`;
  const probes = [
    ...numbers.flatMap((n) => fields.map((f) => body(condition(n, f)))),
    body(condition("99999999999999999999", "size_bytes", "equals")),
    body('{"field":"predicted_tags","op":"contains","value":"x","min_score":99999999999999999999}'),
    body('{"field":"predicted_tags","op":"contains","value":"x","min_score":5e-324}'),
    body('{"field":"filename","op":"regex","value":"(a+)+$"}'),
    body('{"field":"filename","op":"regex","value":"' + "(".repeat(400) + "a" + ")".repeat(400) + '"}'),
    body('{"field":"text","op":"regex","value":"' + "a{1000}".repeat(60) + '"}'),
    body(Array.from({ length: 21 }, () => condition("1", "size_bytes")).join(",")),
    body(condition("1", "size_bytes"), '[{"type":"move","folder_id":99999999999999999999}]'),
    body(condition("1", "size_bytes"), '[{"type":"add_tags","tags":[' + Array.from({ length: 5000 }, () => '"t"').join(",") + "]}]"),
    body(condition("1", "size_bytes"), '[{"type":"set_title","title":' + nested(60) + "}]"),
    body(condition("1", "size_bytes"), '[{"type":"call_webhook","webhook_id":"../../etc/passwd"}]'),
    body(condition("1", "size_bytes"), '[{"type":"run_schema","schema_id":{"__proto__":{"x":1}}}]'),
  ];
  return probes.map((b) => ({ path, body: b, contentType: "application/json" }));
}
function filterQueries(path: string): Probe[] {
  const boxes = ["-180,-90,180,90", "1e400,0,0,0", "NaN,NaN,NaN,NaN", "99999999999999999999,0,1,1", "181,91,-181,-91", "1,2,3", "1,2,3,4,5", ",,,", "0x10,0,0,0", "-0,-0,0,0"];
  const cameras = ["%", "_", "\\", "' OR 1=1 --", "x".repeat(100_000), "%00", "%F0%9F%98%80".repeat(2000)];
  return [
    ...boxes.map((b) => ({ path, query: `bbox=${encodeURIComponent(b)}` })),
    ...cameras.map((c) => ({ path, query: `camera=${c.includes("%") && c.length > 3 ? c : encodeURIComponent(c)}` })),
    ...["true", "false", "maybe", "1", ""].map((v) => ({ path, query: `has_location=${v}` })),
    ...EXTREME_DATES.flatMap((d) => [{ path, query: `taken_from=${encodeURIComponent(d)}` }, { path, query: `taken_to=${encodeURIComponent(d)}&taken_from=2024-01-01` }, { path, query: `date_from=${encodeURIComponent(d)}` }]),
    { path, query: "taken_from=2030-01-01&taken_to=2020-01-01" },
    { path, query: `ids=${Array.from({ length: 5000 }, () => ID).join(",")}` },
    { path, query: `tags=${Array.from({ length: 5000 }, (_, i) => `t${i}`).join(",")}` },
  ];
}

/** The shapes, each a function from a route to the requests it sends. */
const SHAPES: Record<string, (route: Route) => Probe[]> = {
  "JSON nested 10,000 deep": (r) => [json(r, nested(10_000))],
  "JSON nested 100,000 deep": (r) => [json(r, nested(100_000))],
  "a deep array in every field": (r) => [json(r, JSON.stringify(everyField(r.json, () => 0)).replaceAll(":0", `:${nested(20_000)}`))],
  "a 1 MiB array of numbers": (r) => [json(r, `[${"1,".repeat(MiB / 2 - 2)}1]`)],
  "an object of 50,000 keys": (r) => [json(r, JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))))],
  "huge numbers in every field": (r) =>
    HUGE_NUMBERS.slice(0, 4).map((n) => json(r, JSON.stringify(everyField(r.json, (types) => (types.includes("integer") || types.includes("number") ? "__N__" : "x"))).replaceAll('"__N__"', n))),
  "numbers at their bounds in a valid body": (r) => {
    if (!r.json) return [];
    const body = validBody(r);
    const numbers = leaves(r.json, numericLeaf);
    if (!numbers.length) return [];
    const at = (pick: "min" | "max") =>
      numbers.reduce<unknown>((b, path) => {
        const bound = boundsOf(leafSchema(r.json!, path))[pick];
        return JSON.parse(withRaw(b, path, String(bound ?? (pick === "max" ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER))));
      }, body);
    return [json(r, JSON.stringify(at("max"))), json(r, JSON.stringify(at("min")))];
  },
  "a 20-digit number in each numeric field, nested": (r) =>
    r.json ? leaves(r.json, numericLeaf).slice(0, 12).flatMap((path) => ["99999999999999999999", "-1e400"].map((n) => json(r, withRaw(validBody(r), path, n)))) : [],
  "extreme dates in body and query": (r) => [
    ...(r.json ? leaves(r.json, dateLeaf).slice(0, 6).flatMap((path) => EXTREME_DATES.map((d) => json(r, withRaw(validBody(r), path, JSON.stringify(d))))) : []),
    ...queryParams(r).filter((p) => dateLeaf(p.schema ?? {}, p.name)).flatMap((p) => EXTREME_DATES.map((d) => ({ path: r.path, query: `${p.name}=${encodeURIComponent(d)}` }))),
  ],
  "numbers at their bounds in every query parameter": (r) =>
    queryParams(r).flatMap((p) => {
      const { min, max } = boundsOf(p.schema);
      return [min, max].filter((v) => v !== undefined).map((v) => ({ path: r.path, query: `${p.name}=${v}` }));
    }),
  "values the handlers check": (r) => HANDLER_CHECKED[`${r.method} ${r.template}`]?.(r.path) ?? [],
  "a 1 MiB string in every field": (r) => [json(r, JSON.stringify(everyField(r.json, () => "x".repeat(MiB - 200))))],
  "wrong types everywhere": (r) => [
    ...[[], {}, "s", true, null, 1.5].map((v) => json(r, JSON.stringify(everyField(r.json, () => v)))),
    ...["null", "[]", '"s"', "1e400", "", "{", '{"a":1}{"b":2}', "\uFEFF{}"].map((b) => json(r, b)),
  ],
  "invalid UTF-8": (r) => [
    { path: r.path, body: invalidUtf8Body(r), contentType: "application/json" },
    { path: r.path, body: invalidUtf8Body(r), contentType: "application/json; charset=latin1" },
    ...queryParams(r).slice(0, 4).map((p) => ({ path: r.path, query: `${p.name}=%FF%FE%C0%AF` })),
    ...(r.path.includes(ID) ? [{ path: r.path.replace(ID, "%C0%AF%FF") }] : []),
  ],
  "lone surrogates and __proto__": (r) => [json(r, `{"__proto__":{"admin":true},"constructor":{"prototype":{}},"name":"\\ud800","email":"\\udfff"}`)],
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
  "an oversized body with a length": (r) => [{ path: r.path, body: `{"name":"${"x".repeat(4 * MiB)}"}`, contentType: "application/json" }],
  "the wrong content type": (r) => [
    { path: r.path, body: nested(10_000), contentType: "text/plain" },
    { path: r.path, body: "a[b][c][d]=1&".repeat(10_000), contentType: "application/x-www-form-urlencoded" },
    { path: r.path, body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n', contentType: "multipart/form-data; boundary=x" },
    { path: r.path, body: "--x\r\n", contentType: "multipart/form-data" },
    { path: r.path, body: "<a/>", contentType: "application/xml" },
  ],
  "huge numbers in every query parameter": (r) => queryParams(r).flatMap((p) => HUGE_NUMBERS.map((n) => ({ path: r.path, query: `${p.name}=${encodeURIComponent(n)}` }))),
  "a parameter repeated 1,000 times": (r) =>
    queryParams(r)
      .slice(0, 3)
      .map((p) => ({ path: r.path, query: Array.from({ length: 1000 }, (_, i) => `${p.name}=${i}`).join("&") })),
  "hostile headers": (r) =>
    (<Record<string, string>[]>[
      { authorization: `Bearer ${"x".repeat(8000)}` },
      { authorization: "Bearer mbx_\u00ff\u00fe" },
      { authorization: "Basic Og==" },
      { cookie: Array.from({ length: 1000 }, (_, i) => `mediabox_session=${i}`).join("; ") },
      { cookie: `mediabox_session=${"%".repeat(4000)}` },
      { "x-forwarded-for": Array.from({ length: 1000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(", ") },
      { "x-forwarded-for": "not-an-address, ::ffff:999.1.1.1" },
      { range: "bytes=99999999999999999999-" },
      { range: `bytes=${Array.from({ length: 2000 }, (_, i) => `${i}-${i}`).join(",")}` },
      { accept: "application/json;q=99999999999999999999", "accept-encoding": "br;q=1e400, *;q=0" },
      { origin: "null", "if-modified-since": "99999", "if-none-match": `"${"x".repeat(8000)}"` },
    ]).map((headers) => ({ path: r.path, headers })),
  "path parameters out of range": (r) =>
    (r.op.parameters ?? [])
      .filter((p) => p.in === "path")
      .flatMap((p) => ["99999999999999999999", "-1", "%00", "..%2F..%2Fetc", "x".repeat(5000), "%FF"].map((v) => ({ path: pathWith(r.template, { [p.name]: v }) }))),
  // Last: the 5,000-part batch is accepted (CUSTOM has no batch limit), and its files' processing would weigh on the shapes after it.
  "hostile multipart": (r) => MULTIPART_BODIES.map(([contentType, body]) => ({ path: r.path, body, contentType })),
};

const OUTSIDE_THE_DOCUMENT = [
  "/s3/mediabox/%FF",
  "/s3/mediabox/orgs/x/a%E0%A4%A?X-Amz-Signature=x",
  "/s3/mediabox/..%2F..%2Fetc%2Fpasswd",
  `/s3/mediabox/${"x".repeat(5000)}?partNumber=99999999999999999999&uploadId=x`,
  "/s3/other-bucket/x",
  "/docs/assets/%FF",
  "/docs/assets/..%2F..%2Fpackage.json",
  "/app/assets/%FF",
  "/app/assets/..%2F..%2Fpackage.json",
  "/%FF",
  "/api/v2/%FF",
  "/api/v2/files/%C0%AF",
  `/${"x".repeat(10_000)}`,
];

/** Shapes whose every request is hostile: an answer below 400 is listed for a look. */
const MUST_REFUSE = new Set(["JSON nested 10,000 deep", "JSON nested 100,000 deep", "a deep array in every field", "a 1 MiB array of numbers", "an object of 50,000 keys", "a chunked body past the cap", "an oversized body with a length", "a 20-digit number in each numeric field, nested"]);

const part = (headers: string, content: string, boundary = "x") => `--${boundary}\r\n${headers}\r\n\r\n${content}\r\n`;
const fileHeaders = (filename: string) => `Content-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain`;
/** Multipart bodies a careless or hostile client sends (the upload routes parse these themselves; the others through the framework). */
const MULTIPART_BODIES: [string, string][] = [
  ["multipart/form-data; boundary=x", part(fileHeaders("../../../../etc/passwd"), "root:x:0:0") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", part(`Content-Disposition: form-data; name="file"; filename*=UTF-8''%FF%FE%C0%AF\r\nContent-Type: text/plain`, "x") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", part(fileHeaders("a\r\nX-Injected: 1.txt"), "x") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", Array.from({ length: 5000 }, (_, i) => part(fileHeaders(`f${i}.txt`), "x")).join("") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", part(`Content-Disposition: form-data; name="file"; filename="h.txt"\r\nX-Long: ${"h".repeat(100_000)}`, "x") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", part(fileHeaders("unterminated.txt"), "x".repeat(10_000))],
  ["multipart/form-data; boundary=x", `--x\r\nContent-Disposition: form-data; name="file"; filename="nested.txt"\r\nContent-Type: multipart/mixed; boundary=y\r\n\r\n${"--y\r\n\r\n".repeat(1000)}--y--\r\n--x--\r\n`],
  ["multipart/form-data; boundary=x", part(`Content-Disposition: form-data; name="${"n".repeat(50_000)}"`, "x") + "--x--\r\n"],
  [`multipart/form-data; boundary=${"b".repeat(200)}`, part(fileHeaders("long-boundary.txt"), "x", "b".repeat(200)) + `--${"b".repeat(200)}--\r\n`],
  ["multipart/form-data; boundary=", "--\r\n\r\n"],
  ["multipart/form-data", part(fileHeaders("no-boundary.txt"), "x") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", part(`Content-Disposition: form-data; name="file"; filename="empty.txt"`, "") + "--x--\r\n"],
  ["multipart/form-data; boundary=x", part(fileHeaders("deep.json"), "[".repeat(100_000)) + part(`Content-Disposition: form-data; name="metadata"`, "[".repeat(100_000)) + "--x--\r\n"],
];

/** Path parameters: real resources the bench created, else a value of the parameter's kind. */
let realIds: Record<string, string> = {};
function paramValue(name: string, schema: Schema | undefined, method: string): string {
  if (method !== "DELETE" && realIds[name]) return realIds[name]!;
  if (schema?.enum?.length) return String(schema.enum[0]);
  if (typesOf(schema).includes("integer") || name.includes("number")) return "1";
  if (name === "email") return "nobody@example.com";
  if (name === "tag") return "x";
  if (name === "provider") return "google_drive";
  if (name === "domain_name") return "invoice";
  return ID;
}
let templateParams = new Map<string, Parameter[]>();
function pathWith(template: string, overrides: Record<string, string> = {}, method = "GET"): string {
  const params = templateParams.get(template) ?? [];
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => overrides[name] ?? paramValue(name, params.find((p) => p.name === name)?.schema, method));
}

function routes(doc: { paths: Record<string, Record<string, Operation>> }): Route[] {
  const out: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      templateParams.set(template, [...(templateParams.get(template) ?? []), ...(op.parameters ?? []).filter((p) => p.in === "path")]);
      out.push({ method: method.toUpperCase(), template, path: "", op, json: op.requestBody?.content?.["application/json"]?.schema ?? null });
    }
  }
  for (const r of out) r.path = pathWith(r.template, {}, r.method);
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

/** What no error answer may show a client: absolute paths, stack frames. */
const LEAK = /(^|[\s"'(=:])\/(work|tmp|home|root|usr|var|opt|srv|data)\/|node_modules|\bat [\w.<>]+ \(|\.ts:\d+:\d+|file:\/\//i;

/** Whether the document says this answer is not JSON (the OAuth callback is a page for the browser's pop-up). */
const documentedNotJson = (route: Route, status: number) => {
  const content = route.op.responses?.[String(status)]?.content;
  return content !== undefined && !("application/json" in content);
};

/** Why an answer breaks the contract, or null. */
function problemWith(route: Route, answer: Answer): string | null {
  if (answer.status >= 500) return `${answer.status}`;
  // fetch drops the body of an answer to HEAD and TRACE.
  if (answer.status < 400 || route.method === "HEAD" || route.method === "TRACE") return null;
  // Bun's own cap on a request's head (RUNTIME_HEAD_BYTES) answers before any handler runs, with no body (src/http/head-limit.ts).
  if (answer.status === 431 && answer.text === "") return null;
  const leak = LEAK.exec(answer.text);
  if (leak) return `${answer.status} shows "${answer.text.slice(Math.max(0, leak.index - 30), leak.index + 50)}"`;
  if (documentedNotJson(route, answer.status)) return null;
  if (!answer.contentType.includes("application/json")) return `${answer.status} as ${answer.contentType || "no content type"}: ${answer.text.slice(0, 80)}`;
  let detail: unknown;
  try {
    detail = (JSON.parse(answer.text) as { detail?: unknown }).detail;
  } catch {
    return `${answer.status} with a body that is not JSON`;
  }
  if (typeof detail !== "string" || !detail) return `${answer.status} without a detail`;
  return null;
}

let ipCounter = 0;
/** A fresh client address per anonymous call (the server trusts loopback's X-Forwarded-For): the open routes' per-IP limits are not what is fuzzed. */
const freshIp = () => `10.${(++ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;

/** Codes that refuse the caller for who they are (no or a bad credential, a missing permission or role). */
const CALLER_REFUSALS = new Set(["UNAUTHENTICATED", "PERMISSION_DENIED", "SESSION_REQUIRED", "CSRF_FAILED"]);
const codeOf = (answer: Answer) => {
  try {
    return String((JSON.parse(answer.text) as { code?: unknown }).code ?? "");
  } catch {
    return "";
  }
};

interface Caller {
  name: string;
  headers: (method: string) => Record<string, string>;
}

async function main() {
  const only = process.env.MEDIABOX_BENCH_ONLY;
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "fuzz", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "fuzz")).stdout.trim();
  const viewKey = (await cli("keys", "create", "--org", "fuzz", "--permissions", "view")).stdout.trim();
  const password = `Fuzz-${crypto.randomUUID()}`;
  for (const role of ["viewer", "member"]) {
    const made = Bun.spawn([process.execPath, MAIN, "users", "create", `${role}@fuzz.example`, "--org", "fuzz", "--role", role, "--password-stdin", "--data-dir", dataDir], { stdin: new TextEncoder().encode(password), stdout: "ignore", stderr: "pipe" });
    if ((await made.exited) !== 0) throw new Error(`could not create the ${role}: ${await new Response(made.stderr).text()}`);
  }
  const server = await spawnServer([process.execPath, RUNTIME_HEAD_FLAG, MAIN, "serve"], {
    env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info", MEDIABOX_TRUSTED_PROXIES: "loopback" },
    timeoutMs: 300_000,
  });
  const api = (path: string, init: RequestInit = {}) => fetch(`${server.url}/api/v2${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(init.headers ?? {}) } });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, sampleRss(server.proc.pid))), 20);
  // /healthz is probed from a thread of its own: building a 4 MiB body here must not count as the server's stall.
  const prober = new Worker(new URL("./healthz-prober.ts", import.meta.url));
  const latencies = new Promise<number[]>((resolve, reject) => {
    prober.onmessage = (event: MessageEvent<number[]>) => resolve(event.data);
    prober.onerror = (event) => reject(new Error(event.message));
  });
  prober.postMessage({ url: server.url });
  let health: number[] = [];
  let total5xx = 0;
  let headerCapped = 0;
  let maxMainMs = 0;
  let totalRequests = 0;
  const findings: string[] = [];
  const accepted: string[] = [];
  const slow: string[] = [];
  const covered = new Set<string>();
  const note = (list: string[], line: string) => list.length < 200 && list.push(line);

  async function send(method: string, url: string, headers: Record<string, string>, body?: BodyInit): Promise<Answer> {
    try {
      const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), redirect: "manual" });
      return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
    } catch (err) {
      // The connection failed: the server dropped it or died (a client-side refusal is a bug here).
      return { status: 599, contentType: "", text: String(err) };
    }
  }

  try {
    // Real resources for path parameters (a route that deletes gets a made-up id instead).
    const made = async (path: string, body: unknown, field = "id") => ((await (await api(path, { method: "POST", body: JSON.stringify(body) })).json()) as Record<string, string>)[field];
    const form = new FormData();
    form.append("file", new File(["Fuzz note: the pump was inspected on 2024-01-02.\n"], "note.txt"));
    const fileId = ((await (await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers: { authorization: `Bearer ${key}` } })).json()) as { image_id: string }).image_id;
    realIds = Object.fromEntries(
      Object.entries({
        file_id: fileId,
        image_id: fileId,
        folder_id: await made("/folders", { name: "fuzz" }),
        project_id: ((await (await api("/projects")).json()) as { items?: { id: string }[] }).items?.[0]?.id,
        rule_id: await made("/rules", { name: "fuzz", conditions: [], actions: [{ type: "add_tags", tags: ["x"] }] }),
        webhook_id: await made("/webhooks", { url: "https://example.com/hook", events: ["file.completed"] }),
        schema_id: await made("/custom-extraction-schemas", { name: "fuzz", schema: { type: "object", properties: { total: { type: "number" } } } }),
      }).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    const doc = (await (await fetch(`${server.url}/api/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const all = routes(doc);
    console.log(`${all.length} operations in the OpenAPI document; real ids for ${Object.keys(realIds).join(", ")}`);
    for (const [shape, probes] of Object.entries(SHAPES)) {
      if (only && !shape.includes(only)) continue;
      let count = 0;
      let fivexx = 0;
      let okCount = 0;
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
          if (!bodyless && probe.body === undefined && probe.query === undefined && !probe.headers && !shape.startsWith("path") && !shape.startsWith("invalid")) continue;
          for (const auth of [false, true]) {
            const url = `${server.url}${probe.path}${probe.query ? `?${probe.query}` : ""}`;
            const headers: Record<string, string> = { ...(probe.contentType ? { "content-type": probe.contentType } : {}), ...(auth ? { authorization: `Bearer ${key}` } : { "x-forwarded-for": freshIp() }), ...probe.headers };
            const started = performance.now();
            const mainAtStart = cpuSeconds(server.proc.pid).main;
            // A stream body can be sent once: anonymous and authenticated calls each get their own.
            const body = probe.body instanceof ReadableStream ? (SHAPES[shape]!(route)[0]!.body as BodyInit) : probe.body;
            const answer = await send(route.method, url, headers, body);
            const ms = performance.now() - started;
            const mainMs = (cpuSeconds(server.proc.pid).main - mainAtStart) * 1000;
            covered.add(`${route.method} ${route.template}`);
            if (mainMs > heaviest) {
              heaviest = mainMs;
              heaviestAt = `${route.method} ${probe.path}`;
            }
            count++;
            const where = `${shape}: ${auth ? "key" : "anonymous"} ${route.method} ${probe.path.slice(0, 120)}${probe.query ? `?${probe.query.slice(0, 60)}` : ""}${probe.headers ? ` (${Object.keys(probe.headers).join(", ")}: ${Object.values(probe.headers)[0]!.slice(0, 40)})` : ""}`;
            if (mainMs >= 250 || ms >= 5000) note(slow, `${where} -> ${answer.status} after ${ms.toFixed(0)} ms, main-thread CPU ${mainMs.toFixed(0)} ms`);
            if (answer.status >= 500) fivexx++;
            // An answer to HEAD has no body whoever gives it.
            if (answer.status === 431 && answer.text === "" && route.method !== "HEAD" && ++headerCapped <= 5) note(slow, `${where} -> Bun's empty 431`);
            const problem = problemWith(route, answer);
            if (problem) note(findings, `${where} -> ${problem}`);
            if (answer.status < 400) {
              okCount++;
              if (auth && route.json && MUST_REFUSE.has(shape)) note(accepted, `${where} -> ${answer.status}`);
            }
            if (ms > slowest) {
              slowest = ms;
              slowestAt = `${route.method} ${probe.path.slice(0, 120)}`;
            }
          }
        }
      }
      total5xx += fivexx;
      totalRequests += count;
      maxMainMs = Math.max(maxMainMs, heaviest);
      const mainMean = count ? ((cpuSeconds(server.proc.pid).main - mainBefore) * 1000) / count : 0;
      console.log(
        `${shape}: ${count} requests, ${fivexx} 5xx, ${okCount} below 400, slowest answer ${slowest.toFixed(0)} ms (${slowestAt}); ` +
          `main-thread CPU mean ${mainMean.toFixed(1)} ms, max ${heaviest.toFixed(0)} ms (${heaviestAt || "-"})`,
      );
    }

    // Credentials and roles before the body: a wrong body must not learn more than a valid one.
    if (!only || "credentials and roles first".includes(only)) {
      const login = async (email: string): Promise<Caller> => {
        const res = await fetch(`${server.url}/api/v2/auth/session/login`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": freshIp() }, body: JSON.stringify({ email, password }) });
        const cookies = res.headers.getSetCookie().map((c) => c.split(";")[0]!);
        const csrf = ((await res.json()) as { csrf_token?: string }).csrf_token;
        if (!res.ok || !csrf) throw new Error(`could not sign in ${email}: ${res.status}`);
        return { name: email.split("@")[0]!, headers: (method) => ({ cookie: cookies.join("; "), ...(method === "GET" ? {} : { "x-csrf-token": csrf }) }) };
      };
      const callers: Caller[] = [
        { name: "anonymous", headers: () => ({ "x-forwarded-for": freshIp() }) },
        { name: "view-only key", headers: () => ({ authorization: `Bearer ${viewKey}` }) },
        await login("viewer@fuzz.example"),
        await login("member@fuzz.example"),
      ];
      let count = 0;
      let order = 0;
      for (const route of all) {
        if (!["POST", "PUT", "PATCH", "DELETE"].includes(route.method)) continue;
        const pathParams = (route.op.parameters ?? []).filter((p) => p.in === "path");
        // What is wrong in the request: its body, or its path parameters (a malformed id).
        const wrongs: [string, string, string][] = [
          ...(route.json ? [["body", route.path, JSON.stringify(everyField(route.json, () => [[]]))] as [string, string, string]] : []),
          ...(pathParams.length ? [["path", pathWith(route.template, Object.fromEntries(pathParams.map((p) => [p.name, "not-an-id%FF"])), route.method), JSON.stringify(validBody(route))] as [string, string, string]] : []),
        ];
        if (!wrongs.length) continue;
        for (const caller of callers) {
          // Signing out or rotating would end the session the rest of the pass uses.
          if (caller.name !== "anonymous" && caller.name !== "view-only key" && route.template.startsWith("/api/v2/auth/session/")) continue;
          const headers = () => ({ "content-type": "application/json", ...caller.headers(route.method) });
          const valid = await send(route.method, `${server.url}${route.path}`, headers(), JSON.stringify(validBody(route)));
          count++;
          covered.add(`${route.method} ${route.template}`);
          for (const [what, path, body] of wrongs) {
            const wrong = await send(route.method, `${server.url}${path}`, headers(), body);
            count++;
            for (const answer of [wrong, valid]) {
              const problem = problemWith(route, answer);
              if (problem) note(findings, `credentials and roles first: ${caller.name} ${route.method} ${route.path} -> ${problem}`);
              if (answer.status >= 500) total5xx++;
            }
            // Only a refusal of the caller counts (a closed registration or wrong password is the route's answer, not a credential check).
            if (wrong.status === 400 && CALLER_REFUSALS.has(codeOf(valid))) {
              order++;
              note(findings, `credentials and roles first: ${caller.name} ${route.method} ${route.path}: a wrong ${what} gets 400, a valid request ${valid.status} ${codeOf(valid)}`);
            }
          }
        }
      }
      totalRequests += count;
      console.log(`credentials and roles first: ${count} requests, ${order} answers that checked the body or path before the credential or role`);
    }
    // Routes outside the document: the local S3 endpoint presigned URLs point at, and the pages' assets (5xx, paths and stacks are checked; the S3 endpoint answers S3's XML).
    for (const path of OUTSIDE_THE_DOCUMENT) {
      for (const method of ["GET", "PUT", "HEAD"]) {
        const answer = await send(method, `${server.url}${path}`, { "x-forwarded-for": freshIp() }, method === "PUT" ? "x" : undefined);
        totalRequests++;
        if (answer.status >= 500) total5xx++;
        const problem = answer.status >= 500 ? `${answer.status}` : answer.status >= 400 && LEAK.test(answer.text) ? `${answer.status} shows a path or stack: ${answer.text.slice(0, 120)}` : null;
        if (problem) note(findings, `outside the document: ${method} ${path} -> ${problem}`);
      }
    }
    const missed = all.filter((r) => !covered.has(`${r.method} ${r.template}`)).map((r) => `${r.method} ${r.template}`);
    console.log(`routes covered: ${covered.size} of ${all.length} operations${missed.length ? ` (not reached: ${missed.join(", ")})` : ""}`);
  } finally {
    prober.postMessage("stop");
    health = await Promise.race([latencies, Bun.sleep(10_000).then(() => [] as number[])]);
    prober.terminate();
    clearInterval(sampler);
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`\n${findings.length} findings (answers of 400 and above that are not the JSON envelope, or show a path, stack or HTML; 5xx; body read before the credential)`);
  for (const f of findings) console.log(`  ${f}`);
  if (slow.length) console.log(`\n${slow.length} requests that held the event loop 250 ms or more, or took 5 s:`);
  for (const line of slow) console.log(`  ${line}`);
  if (accepted.length) console.log(`\n${accepted.length} hostile requests answered below 400 (a look, not necessarily wrong):`);
  for (const a of accepted) console.log(`  ${a}`);
  const sorted = [...health].sort((a, b) => a - b);
  const maxHealth = sorted.at(-1) ?? 0;
  const p99 = sorted[Math.floor(0.99 * (sorted.length - 1))] ?? 0;
  console.log(`\n${headerCapped} answers were Bun's empty 431 (a head past the ${RUNTIME_HEAD_BYTES}-byte runtime cap, before any handler)`);
  console.log(
    `\nfuzz: ${totalRequests} requests, ${total5xx} 5xx, ${findings.length} findings; longest event-loop stall by one request ~${maxMainMs.toFixed(0)} ms of main-thread CPU (10 ms resolution); /healthz p99 ${p99.toFixed(0)} ms, max ${maxHealth.toFixed(0)} ms (${sorted.length} probes); peak RSS with children ${Math.round(peakRss / MiB)} MB` +
      ` (targets: 0 5xx, max < 1000 ms, < 1536 MB: ${total5xx === 0 && maxHealth < 1000 && peakRss < 1536 * MiB ? "met" : "NOT met"})`,
  );
}

try {
  await main();
} finally {
  // Also when setting up the organization, keys or users failed, before the server started.
  rmSync(root, { recursive: true, force: true });
}
