/**
 * No text wedges processing. Through real HTTP, each pathological text of
 * support/pathological-texts.ts (10 MB on one line, markup that never closes, a million table
 * rows, runs of emoji...) is read, chunked and stored on its first attempt, every chunk within the
 * chunker's character bound, and a normal note uploaded after them all is processed too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_CHUNKING } from "../src/documents/chunking.ts";
import { PATHOLOGICAL_TEXTS } from "./support/pathological-texts.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

/** Minutes on a busy machine; seconds on an idle one (bench:bombs prints the times). */
const TIMEOUT = 300_000;
const MAX_CHUNK_CHARS = DEFAULT_CHUNKING.maxTokens * DEFAULT_CHUNKING.minCharsPerToken;

let server: TestServer;
let owner: Tenant;
beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
});
afterAll(() => server.close());

const upload = (bytes: Uint8Array, filename: string) => uploadFile(owner.api, bytes, filename);

describe("pathological texts through HTTP", () => {
  test(
    "every one is read, chunked and stored on its first attempt; a note after them is processed too",
    async () => {
      const ids = new Map<string, string>();
      for (const text of PATHOLOGICAL_TEXTS) ids.set(text.name, await upload(text.make(), text.filename));
      const note = await upload(new TextEncoder().encode("Pump P-12 was inspected on Monday and its seals were replaced."), "note.txt");
      for (const [name, id] of [...ids, ["the note after them", note] as const]) {
        await processed(owner, id, TIMEOUT);
        const status = (await owner.api.get(`/files/${id}/processing-status`)).body;
        expect({ name, status: status.processing_status, text: status.text_extraction_status, error: status.error_message }).toEqual({
          name,
          status: "completed",
          text: "completed",
          error: null,
        });
        const jobId = (await owner.api.get(`/files/uploads-status/${id}`)).body.processing_ids[0];
        expect({ name, attempts: (await owner.api.get(`/job/${jobId}`)).body.attempts }).toEqual({ name, attempts: 1 });
        const chunks = (await owner.api.get(`/files/${id}/chunks`)).body.chunks as { content: string; heading_hierarchy: string[] }[];
        expect({ name, some: chunks.length > 0 }).toEqual({ name, some: true });
        const longest = chunks.reduce((most, c) => Math.max(most, c.content.length, ...c.heading_hierarchy.map((h) => h.length)), 0);
        expect({ name, within: longest <= MAX_CHUNK_CHARS }).toEqual({ name, within: true });
      }
    },
    TIMEOUT * 2,
  );
});
