/**
 * No error a tenant can read shows the server's insides. Through real HTTP, one run provokes
 * each kind of failure (a models directory with an incomplete model folder, and no German OCR
 * data for the images that are read, a corrupt image, a corrupt and a truncated PDF, a DOCX past the decode limits, a
 * truncated video and mutated copies of one, an unreachable link, a link past its stage budget),
 * then reads every tenant-visible error field of every answer about those files (the file, its
 * processing status, its upload status, its job with each stage's outcome, a document's pages)
 * and finds no absolute path, no file: URI, no data or models directory, no storage key and no
 * stack frame in any of them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server } from "bun";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { inflationBombDocx } from "./support/document-bombs.ts";
import { corruptPdf, truncatedPdf } from "./support/documents.ts";
import { png } from "./support/fixtures.ts";
import { pollApi, terminalStatus } from "./support/polling.ts";
import { startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

const TIMEOUT = 300_000;
const VIDEOS = join(import.meta.dir, "fixtures", "video");

let server: TestServer;
let owner: Tenant;
let modelsDir: string;
let site: Server<unknown>;
let release: () => void;

beforeAll(async () => {
  // A models directory an operator half filled: a CLIP folder without its weights, no German OCR data.
  modelsDir = tempDir();
  mkdirSync(join(modelsDir, "clip"), { recursive: true });
  writeFileSync(join(modelsDir, "clip", "config.json"), JSON.stringify({ model_type: "clip", architectures: ["CLIPModel"] }));
  writeFileSync(join(modelsDir, "clip", "preprocessor_config.json"), "{}");
  const hang = Promise.withResolvers<void>();
  release = hang.resolve;
  site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => (new URL(request.url).pathname === "/hang" ? hang.promise.then(() => new Response("late")) : new Response("gone", { status: 404 })),
  });
  server = await startTestServer({
    env: {
      MEDIABOX_MODELS_DIR: modelsDir,
      MEDIABOX_IMAGE_EMBEDDING_MODEL: "clip",
      MEDIABOX_OCR_LANGUAGES: "eng,deu",
      MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.0/8",
      MEDIABOX_LINK_PORTS: "any",
      MEDIABOX_STAGE_BUDGETS: "link.fetch=2",
    },
  });
  owner = await server.tenant({ tier: "CUSTOM" });
}, TIMEOUT);

afterAll(async () => {
  release?.();
  await site?.stop(true);
  await server?.close();
});

const upload = (bytes: Uint8Array, filename: string) => uploadFile(owner.api, bytes, filename);

async function saveLink(url: string): Promise<string> {
  const res = await owner.api.post("/files/links", { url });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

/** Copies of a video with bytes overwritten or cut at fixed places (what a fuzzer's mutations look like). */
function mutatedVideos(bytes: Uint8Array): Uint8Array[] {
  const cut = (fraction: number) => bytes.slice(0, Math.floor(bytes.length * fraction));
  const scrambled = (from: number, length: number) => {
    const copy = bytes.slice();
    for (let i = from; i < Math.min(copy.length, from + length); i++) copy[i] = (i * 167) % 256;
    return copy;
  };
  return [cut(0.2), cut(0.6), scrambled(32, 64), scrambled(Math.floor(bytes.length / 2), 4096)];
}

/** Keys whose values a tenant reads as an error or reason. */
const ERROR_KEY = /error|reason|warning|message|detail/i;

/** Every string under an error-like key, anywhere in `value`, with where it was found. */
function errorTexts(value: unknown, where: string, out: { where: string; text: string }[] = [], underErrorKey = false): { where: string; text: string }[] {
  if (typeof value === "string") {
    if (underErrorKey) out.push({ where, text: value });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => errorTexts(v, `${where}[${i}]`, out, underErrorKey));
  } else if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) errorTexts(v, `${where}.${key}`, out, underErrorKey || ERROR_KEY.test(key));
  }
  return out;
}

/** What no tenant-visible error may hold, by what it would reveal. */
function leaks(text: string): string[] {
  const found: string[] = [];
  if (/(^|[\s'"(\[=:,])\/[^\s/'"():,]+\//.test(text)) found.push("an absolute path");
  if (/\bfile:\//i.test(text)) found.push("a file: URI");
  if (text.includes(server.dataDir)) found.push("the data directory");
  if (text.includes(modelsDir)) found.push("the models directory");
  if (/\bblobs\//.test(text)) found.push("the blob store's folders");
  if (/\borgs\/[\w-]+\/files\//.test(text)) found.push("a storage key");
  if (/(^|\n)\s*at\s+\S+.*[:(]\d+:\d+\)?/.test(text) || /\bat [\w.<>]+ \(.*:\d+:\d+\)/.test(text)) found.push("a stack frame");
  return found;
}

test(
  "every tenant-visible error of a run that provokes each failure kind is free of paths, storage keys and stacks",
  async () => {
    const photo = await sharp({ create: { width: 96, height: 64, channels: 3, background: "#3a6" } }).png().toBuffer();
    const corruptImage = png(32, 32);
    corruptImage.fill(7, 40);
    const scenes = readFileSync(join(VIDEOS, "scenes.mp4"));
    const files: Record<string, string> = {
      "photo (incomplete model folder, missing OCR language)": await upload(photo, "photo.png"),
      "corrupt image": await upload(corruptImage, "corrupt.png"),
      "corrupt PDF": await upload(corruptPdf(), "corrupt.pdf"),
      "truncated PDF": await upload(await truncatedPdf(), "truncated.pdf"),
      "DOCX past the decode limits": await upload(await inflationBombDocx(40 * 1024 * 1024, { declaredSize: 1024 * 1024 }), "liar.docx"),
      "truncated video": await upload(readFileSync(join(VIDEOS, "truncated.mp4")), "truncated.mp4"),
    };
    for (const [i, bytes] of mutatedVideos(scenes).entries()) files[`mutated video ${i + 1}`] = await upload(bytes, `mutated-${i + 1}.mp4`);
    // A port nothing listens on, a page that never answers (past the fetch stage's 2 s budget), a 404.
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const closedPort = closed.port;
    await closed.stop(true);
    files["unreachable link"] = await saveLink(`http://127.0.0.1:${closedPort}/page`);
    files["link past its stage budget"] = await saveLink(`http://127.0.0.1:${site.port}/hang`);
    files["link answering 404"] = await saveLink(`http://127.0.0.1:${site.port}/missing`);

    const seen: { where: string; text: string }[] = [];
    for (const [kind, id] of Object.entries(files)) {
      const upload = await terminalStatus(owner, id, TIMEOUT);
      // A link retries transient failures: wait for its crawl to end, not only for a first attempt.
      const file = (
        await pollApi(owner, `/files/${id}`, (r) => r.status === 200 && !["pending", "crawling"].includes(r.body.crawl_status ?? "done"), {
          what: `${kind} to finish`,
          timeoutMs: TIMEOUT,
        })
      ).body;
      const answers: Record<string, unknown> = {
        file,
        upload,
        processing: (await owner.api.get(`/files/${id}/processing-status`)).body,
      };
      for (const jobId of upload.processing_ids ?? []) answers[`job ${jobId}`] = (await owner.api.get(`/job/${jobId}`)).body;
      if (file.media_type === "document") answers.digitization = (await owner.api.get(`/files/${id}/digitization`)).body;
      seen.push(...errorTexts(answers, kind));
    }

    // The run did provoke the failures (else this test could not fail).
    const all = seen.map((s) => s.text).join("\n");
    for (const expected of [/model "clip" is incomplete/, /took longer than 2 s/, /404/, /ECONNREFUSED/]) expect(all).toMatch(expected);
    expect(seen.filter((s) => s.where.startsWith("truncated video") || s.where.startsWith("mutated video")).length).toBeGreaterThan(0);
    expect(seen.filter((s) => s.where.startsWith("corrupt PDF")).length).toBeGreaterThan(0);

    const leaking = seen.map((s) => ({ ...s, leaks: leaks(s.text) })).filter((s) => s.leaks.length > 0);
    expect(leaking).toEqual([]);
  },
  TIMEOUT * 2,
);
