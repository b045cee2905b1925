/**
 * The built-in text model's common words, prepared in the background after start, through a
 * running server: progress in GET /metrics, a document made of prepared words embedded without a
 * model run for its words, and a restart that finds the work done.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { commonWords } from "../src/embeddings/common-words.ts";
import { STOP_WORDS } from "../src/text/stop-words.ts";
import { pollApi, processed, waitFor } from "./support/polling.ts";
import { startTestServer, tempDir, type TestServer } from "./support/server.ts";

const dataDir = tempDir();
const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The value of the sample whose line starts with `name` (labels included), or null. */
async function metric(server: TestServer, name: string): Promise<number | null> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ").at(-1)) : null;
}
const VOCABULARY = 'mediabox_text_model_words_computed{purpose="vocabulary"}';
const TEXTS = 'mediabox_text_model_words_computed{purpose="texts"}';

test("common words are prepared after start; a document of them needs no model run for its words; a restart has nothing left to do", async () => {
  const env = { MEDIABOX_TEXT_VOCABULARY_WORDS: "300" };
  const server = await startTestServer({ dataDir, env });
  servers.push(server);
  await waitFor(async () => (await metric(server, VOCABULARY)) === 300 && (await metric(server, "mediabox_text_vocabulary_pending_words")) === 0, {
    what: "300 common words to be prepared",
    timeoutMs: 240_000,
  });

  const tenant = await server.tenant();
  const content = commonWords(300).filter((w) => !STOP_WORDS.has(w));
  const text = Array.from({ length: 6 }, (_, i) => `${content.slice(i * 20, i * 20 + 20).join(" ")}.`).join("\n\n");
  const form = new FormData();
  form.append("file", new File([text], "common.txt", { type: "text/plain" }));
  const upload = await tenant.api.form("/files/upload", form);
  expect(upload.status, JSON.stringify(upload.body)).toBe(201);
  const id = upload.body.image_id as string;
  await processed(tenant, id);
  await pollApi(tenant, `/files/${id}/processing-status`, (res) => res.body.embedding_status === "completed", { what: "the document's chunks to be embedded" });
  expect(await metric(server, TEXTS)).toBe(0);
  const search = await tenant.api.post("/files/search", { query: content.slice(3, 6).join(" "), mode: "vector", limit: 3 });
  expect(search.status).toBe(200);
  expect(search.body.results[0]?.document_id ?? search.body.results[0]?.file_id).toBe(id);
  await server.close();
  servers.pop();

  const again = await startTestServer({ dataDir, env });
  servers.push(again);
  const second = await again.tenant();
  const form2 = new FormData();
  form2.append("file", new File([content.slice(60).join(" ")], "more.txt", { type: "text/plain" }));
  const id2 = (await second.api.form("/files/upload", form2)).body.image_id as string;
  await processed(second, id2);
  await pollApi(second, `/files/${id2}/processing-status`, (res) => res.body.embedding_status === "completed", { what: "the second document's chunks to be embedded" });
  // The restarted server counts what is left (after its start-up delay) and finds nothing.
  await waitFor(async () => (await metric(again, "mediabox_text_vocabulary_pending_words")) === 0, { what: "the restarted server to count the words left" });
  expect(await metric(again, VOCABULARY)).toBe(0);
  expect(await metric(again, TEXTS)).toBe(0);
  // Preparing runs USE's 8,000 pieces before the words: ~10 s on a quiet 2-core machine, over a
  // minute on a busy one (the suite's default 90 s per test was passed under heavy load).
}, 300_000);
