/**
 * A request's latency through authentication (docs/scale-out.md): a server on SQLite, its owner
 * made over HTTP (first run from loopback, then an API key from the session), then requests one at
 * a time, the kinds alternating round by round: an API key on a path no route answers (the guard
 * alone: key lookup, rate limit, 404), an API key on GET /projects, the session cookie on
 * GET /projects, and /healthz without a credential (the guard runs for every request). The clock
 * skips a minute every 250 requests, past the dashboard's rate limit, so a session's last use is
 * written every 250th request as it is once a minute. Prints each kind's median and p90 in
 * microseconds. Only HTTP is used, so the same script measures the code before and after a change.
 *
 *   bun scripts/bench/auth-latency.ts [requests per kind, default 3000]
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";

const perKind = Number(process.argv[2] ?? 3000);
const rounds = 10;
const dataDir = mkdtempSync(join(tmpdir(), "mediabox-auth-latency-"));
const config = loadConfig({}, { MEDIABOX_PORT: "0", MEDIABOX_HOST: "127.0.0.1", MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "error", MEDIABOX_TEXT_EMBEDDING_MODEL: "use-lite-sif", MEDIABOX_LAYOUT_MODEL: "none" });
// The dashboard's 300 requests a minute per session would stop the loop: time moves a minute every 250 requests.
let skew = 0;
const server = await startServer(config, { queues: [], kinds: [], clock: { now: () => Date.now() + skew } });
const api = `${server.url}/api/v2`;

try {
  const setup = await fetch(`${api}/auth/session/setup-owner`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ organization_name: "Bench", email: "owner@example.com", password: "a long bench password 42" }),
  });
  if (setup.status !== 200 && setup.status !== 201) throw new Error(`setup-owner: ${setup.status} ${await setup.text()}`);
  const cookies = new Map(setup.headers.getSetCookie().map((c) => c.split(";")[0]!.split("=") as [string, string]));
  const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const csrf = decodeURIComponent(cookies.get("mediabox_csrf")!);
  const made = await fetch(`${api}/account/api-keys`, { method: "POST", headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" }, body: JSON.stringify({ name: "bench" }) });
  if (made.status !== 201) throw new Error(`api key: ${made.status} ${await made.text()}`);
  const key = ((await made.json()) as { key: string }).key;

  const kinds = {
    "key, no route (guard only)": { url: `${api}/no-such-route`, headers: { authorization: `Bearer ${key}` }, status: 404 },
    "key, GET /projects": { url: `${api}/projects`, headers: { authorization: `Bearer ${key}` }, status: 200 },
    "session, GET /projects": { url: `${api}/projects`, headers: { cookie }, status: 200 },
    "no credential, GET /healthz": { url: `${server.url}/healthz`, headers: {}, status: 200 },
  };
  const times = new Map<string, number[]>(Object.keys(kinds).map((k) => [k, []]));
  // Warm up (JIT, statement caches), then alternate the kinds round by round so load drifts hit all.
  let sent = 0;
  for (const kind of Object.values(kinds)) {
    for (let i = 0; i < 200; i++) {
      if (++sent % 250 === 0) skew += 61_000;
      await (await fetch(kind.url, { headers: kind.headers })).arrayBuffer();
    }
  }
  for (let round = 0; round < rounds; round++) {
    for (const [name, kind] of Object.entries(kinds)) {
      for (let i = 0; i < perKind / rounds; i++) {
        if (++sent % 250 === 0) skew += 61_000;
        const started = performance.now();
        const res = await fetch(kind.url, { headers: kind.headers });
        await res.arrayBuffer();
        times.get(name)!.push(performance.now() - started);
        if (res.status !== kind.status) throw new Error(`${name}: ${res.status}`);
      }
    }
  }
  for (const [name, list] of times) {
    list.sort((a, b) => a - b);
    const at = (p: number) => Math.round(list[Math.min(list.length - 1, Math.floor(p * list.length))]! * 1000);
    console.log(`${name.padEnd(30)} median ${String(at(0.5)).padStart(5)} us  p90 ${String(at(0.9)).padStart(5)} us  (${list.length} requests)`);
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
