/**
 * BlobStore.put on both backends (the local disk store and S3 through the test S3 server (test/support/s3-server.ts)): bytes, web
 * streams and async iterables are stored whole, and a body that fails part-way stores nothing
 * (the key keeps what it held before, and nothing half-written is left behind).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { systemClock } from "../src/clock.ts";
import { readObject, type BlobStore } from "../src/storage/blob-store.ts";
import { DataDir } from "../src/storage/data-dir.ts";
import { loadLocalCredentials } from "../src/storage/local-credentials.ts";
import { LocalBlobStore } from "../src/storage/local-store.ts";
import { makeS3Client } from "../src/storage/presigner.ts";
import { S3BlobStore } from "../src/storage/s3-store.ts";
import { startS3Server, type S3Fixture } from "./support/s3-server.ts";
import { tempDir } from "./support/server.ts";
import { waitFor } from "./support/polling.ts";

const MiB = 1024 * 1024;

/** Deterministic bytes, different at every offset, so a reordered or dropped chunk shows. */
function pattern(size: number, seed = 7): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed + (i >> 12)) & 0xff;
  return out;
}

function webStream(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

async function* chunks(bytes: Uint8Array, chunk: number): AsyncIterable<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += chunk) yield bytes.slice(at, at + chunk);
}

/** Yields `before` bytes, then fails as a dropped client or a failed render would. */
async function* failingAfter(before: number, chunk = 64 * 1024): AsyncIterable<Uint8Array> {
  yield* chunks(pattern(before), chunk);
  throw new Error("the source failed half-way");
}

function failingWebStream(before: number): ReadableStream<Uint8Array> {
  const source = pattern(before);
  let sent = false;
  return new ReadableStream({
    pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(source);
      } else controller.error(new Error("the source failed half-way"));
    },
  });
}

interface Backend {
  store: BlobStore;
  /** What the backend holds besides acknowledged objects (half-written files), if it can tell. */
  leftovers(): string[];
  close(): Promise<void>;
}

const backends: Record<string, () => Promise<Backend>> = {
  local: async () => {
    const root = tempDir("mediabox-put-");
    const dataDir = new DataDir(root);
    const store = new LocalBlobStore(dataDir.blobs, loadLocalCredentials(dataDir.localS3Secret), systemClock);
    return {
      store,
      leftovers: () => readdirSync(dataDir.blobs.tmp),
      close: async () => rmSync(root, { recursive: true, force: true }),
    };
  },
  s3: async () => {
    const s3: S3Fixture = await startS3Server();
    const client = makeS3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    return { store: new S3BlobStore(client, s3.bucket, systemClock), leftovers: () => [], close: () => s3.close() };
  },
};

for (const [name, start] of Object.entries(backends)) {
  describe(`BlobStore.put (${name})`, () => {
    let backend: Backend;
    let store: BlobStore;
    beforeAll(async () => {
      backend = await start();
      store = backend.store;
    });
    afterAll(() => backend?.close());

    test("bytes are stored whole", async () => {
      const bytes = pattern(300 * 1024);
      await store.put("orgs/o1/put/bytes.bin", bytes, "application/octet-stream");
      expect(await store.size("orgs/o1/put/bytes.bin")).toBe(bytes.byteLength);
      expect(Uint8Array.from((await readObject(store, "orgs/o1/put/bytes.bin"))!)).toEqual(bytes);
    });

    test("empty bytes make an empty object", async () => {
      await store.put("orgs/o1/put/empty.bin", new Uint8Array(), "application/octet-stream");
      expect(await store.size("orgs/o1/put/empty.bin")).toBe(0);
    });

    test("a web stream is stored whole, in order", async () => {
      const bytes = pattern(1 * MiB + 123, 3);
      await store.put("orgs/o1/put/web.bin", webStream(bytes, 50_000), "application/octet-stream");
      const back = await readObject(store, "orgs/o1/put/web.bin");
      expect(back?.byteLength).toBe(bytes.byteLength);
      expect(Uint8Array.from(back!)).toEqual(bytes);
    });

    test("an async iterable is stored whole and replaces what the key held", async () => {
      await store.put("orgs/o1/put/iter.bin", new TextEncoder().encode("old"), "text/plain");
      const bytes = pattern(700 * 1024, 11);
      await store.put("orgs/o1/put/iter.bin", chunks(bytes, 4096), "application/octet-stream");
      expect(Uint8Array.from((await readObject(store, "orgs/o1/put/iter.bin"))!)).toEqual(bytes);
    });

    test("a stream larger than one upload part is stored whole", async () => {
      // Past lib-storage's 16 MiB part size, so S3 takes the multipart path.
      const bytes = pattern(17 * MiB + 5, 5);
      await store.put("orgs/o1/put/large.bin", chunks(bytes, 256 * 1024), "application/octet-stream");
      expect(await store.digest("orgs/o1/put/large.bin")).toEqual({
        size: bytes.byteLength,
        sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
      });
    });

    test("a stream that fails leaves nothing at the key", async () => {
      await expect(store.put("orgs/o1/put/failed.bin", failingAfter(200 * 1024), "application/octet-stream")).rejects.toThrow();
      expect(await store.size("orgs/o1/put/failed.bin")).toBeNull();
      await expect(store.put("orgs/o1/put/failed-web.bin", failingWebStream(100 * 1024), "application/octet-stream")).rejects.toThrow();
      expect(await store.size("orgs/o1/put/failed-web.bin")).toBeNull();
      expect(backend.leftovers()).toEqual([]);
    });

    test("a stream that fails after a whole upload part leaves nothing at the key", async () => {
      await expect(store.put("orgs/o1/put/failed-large.bin", failingAfter(17 * MiB, 256 * 1024), "application/octet-stream")).rejects.toThrow();
      expect(await store.size("orgs/o1/put/failed-large.bin")).toBeNull();
      expect(backend.leftovers()).toEqual([]);
    });

    test("a stream that fails keeps the object the key already held", async () => {
      await store.put("orgs/o1/put/kept.txt", new TextEncoder().encode("the first version"), "text/plain");
      await expect(store.put("orgs/o1/put/kept.txt", failingAfter(10 * 1024), "text/plain")).rejects.toThrow();
      expect((await readObject(store, "orgs/o1/put/kept.txt"))?.toString()).toBe("the first version");
    });
  });
}

test("a write still in flight when the local store closes leaves no partial file", async () => {
  const root = tempDir("mediabox-put-close-");
  const dataDir = new DataDir(root);
  const store = new LocalBlobStore(dataDir.blobs, loadLocalCredentials(dataDir.localS3Secret), systemClock);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // A render that has written its first bytes and waits (as a stage cut off by a stop does).
  async function* stalled(): AsyncIterable<Uint8Array> {
    yield pattern(64 * 1024);
    await held;
  }
  const write = store.put("orgs/o1/put/stalled.bin", stalled());
  try {
    await waitFor(() => readdirSync(dataDir.blobs.tmp).length === 1, { what: "the partial file" });
    await store.close();
    expect(readdirSync(dataDir.blobs.tmp)).toEqual([]);
    release();
    // The interrupted write fails and stores nothing.
    await expect(write).rejects.toThrow();
    expect(await store.size("orgs/o1/put/stalled.bin")).toBeNull();
    expect(readdirSync(dataDir.blobs.tmp)).toEqual([]);
  } finally {
    release();
    rmSync(root, { recursive: true, force: true });
  }
});

describe("BlobStore.put (s3) object headers", () => {
  let s3: S3Fixture;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(() => s3?.close());

  test("objects are stored with the type and disposition the serving policy allows", async () => {
    const client = makeS3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = new S3BlobStore(client, s3.bucket, systemClock);
    await store.put("orgs/o1/v.webp", pattern(1000), "image/webp");
    await store.put("orgs/o1/x.svg", new TextEncoder().encode("<svg/>"), "image/svg+xml");
    const webp = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: "orgs/o1/v.webp" }));
    expect(webp.ContentType).toBe("image/webp");
    const svg = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: "orgs/o1/x.svg" }));
    expect(svg.ContentType).toBe("application/octet-stream");
    expect(svg.ContentDisposition).toBe("attachment");
  });
});
