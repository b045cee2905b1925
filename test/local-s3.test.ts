import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../src/clock.ts";
import { LocalBlobStore } from "../src/storage/local-store.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

let server: TestServer;
let store: LocalBlobStore;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  server = await startTestServer({ clock });
  store = server.ctx.blobs as LocalBlobStore;
});
afterAll(() => server.close());

const sha256 = (bytes: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(bytes).digest();
const objectPath = (key: string) => join(server.dataDir, "blobs", "objects", key);

// The appliance's own S3 endpoint and local blob store: a deployment with a bucket has neither.
describe.skipIf(sharedDeployment())("local S3-compatible endpoint", () => {
  test("a presigned PUT with the signed checksum stores the object; a presigned GET reads it back", async () => {
    const key = `test/${crypto.randomUUID()}/original`;
    const body = "hello presigned world";
    const url = await store.presignPut(key, { contentType: "text/plain", checksumSha256Base64: sha256(body).toString("base64"), expiresInSeconds: 300 }, server.url);
    expect(url.startsWith(`${server.url}/s3/mediabox/${key}?`)).toBe(true);
    const put = await fetch(url, {
      method: "PUT",
      body,
      headers: { "content-type": "text/plain", "x-amz-checksum-sha256": sha256(body).toString("base64"), "x-amz-sdk-checksum-algorithm": "SHA256" },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await Bun.file(objectPath(key)).text()).toBe(body);

    const get = await fetch(await store.presignGet(key, { expiresInSeconds: 60, downloadName: "résumé.txt" }, server.url));
    expect(get.status).toBe(200);
    expect(await get.text()).toBe(body);
    expect(get.headers.get("content-disposition")).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9.txt");

    const ranged = await fetch(await store.presignGet(key, { expiresInSeconds: 60 }, server.url), { headers: { range: "bytes=6-14" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("presigned");
  });

  test("a body that does not match the signed checksum is refused and nothing is stored", async () => {
    const key = `test/${crypto.randomUUID()}/original`;
    const checksum = sha256("expected").toString("base64");
    const url = await store.presignPut(key, { contentType: "text/plain", checksumSha256Base64: checksum, expiresInSeconds: 300 }, server.url);
    const put = await fetch(url, { method: "PUT", body: "something else", headers: { "content-type": "text/plain", "x-amz-checksum-sha256": checksum, "x-amz-sdk-checksum-algorithm": "SHA256" } });
    expect(put.status).toBe(400);
    expect(await put.text()).toContain("BadDigest");
    expect(existsSync(objectPath(key))).toBe(false);
  });

  test("tampered, expired, replayed-for-another-key and unsigned URLs are 403", async () => {
    const key = `test/${crypto.randomUUID()}/original`;
    const url = await store.presignPut(key, { contentType: "application/octet-stream", expiresInSeconds: 60 }, server.url);
    const put = (target: string, headers: Record<string, string> = {}) => fetch(target, { method: "PUT", body: "x", headers });

    const otherKey = url.replace(key, `test/${crypto.randomUUID()}/original`);
    const sig = new URL(url).searchParams.get("X-Amz-Signature")!;
    const flipped = url.replace(sig, (sig[0] === "a" ? "b" : "a") + sig.slice(1));
    const longer = url.replace("X-Amz-Expires=60", "X-Amz-Expires=600");
    const unsigned = url.split("?")[0]!;
    for (const [label, target, code] of [
      ["other key", otherKey, "SignatureDoesNotMatch"],
      ["flipped signature", flipped, "SignatureDoesNotMatch"],
      ["extended expiry", longer, "SignatureDoesNotMatch"],
      ["no signature", unsigned, "AccessDenied"],
    ] as const) {
      const res = await put(target);
      expect(res.status, label).toBe(403);
      expect(await res.text(), label).toContain(code);
    }
    // A checksum-signed URL refuses a request without the signed header.
    const withChecksum = await store.presignPut(key, { contentType: "text/plain", checksumSha256Base64: sha256("x").toString("base64"), expiresInSeconds: 60 }, server.url);
    expect((await put(withChecksum)).status).toBe(403);

    clock.advance(61_000);
    const expired = await put(url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain("expired");
    expect(existsSync(objectPath(key))).toBe(false);
    expect(readdirSync(join(server.dataDir, "blobs", "tmp"))).toEqual([]);
  });

  test("multipart: parts answer their MD5 ETag and complete in order into one object", async () => {
    const key = `test/${crypto.randomUUID()}/original`;
    const parts = ["part-1-", "part-2-", "end"];
    const uploadId = await store.createMultipartUpload(key, "application/octet-stream", { partSize: 7, totalSize: 17 });
    const wrongSize = await fetch(await store.presignPart(key, uploadId, 2, 60, server.url), { method: "PUT", body: "too long for part 2" });
    expect(wrongSize.status).toBe(400);
    expect(await wrongSize.text()).toContain("exactly 7 bytes");
    expect(await store.getPart(key, uploadId, 2)).toBeNull();
    // A part sent again replaces the earlier bytes.
    await fetch(await store.presignPart(key, uploadId, 1, 60, server.url), { method: "PUT", body: "XXXXXXX" });
    const etags: string[] = [];
    for (const [i, body] of parts.entries()) {
      const res = await fetch(await store.presignPart(key, uploadId, i + 1, 60, server.url), { method: "PUT", body });
      expect(res.status).toBe(200);
      const etag = res.headers.get("etag")!;
      expect(etag).toBe(`"${new Bun.CryptoHasher("md5").update(body).digest("hex")}"`);
      etags.push(etag);
    }
    const digest = await store.completeMultipartUpload(key, uploadId, etags.map((etag, i) => ({ partNumber: i + 1, etag })));
    expect(digest.sha256).toBe(sha256(parts.join("")).toString("hex"));
    expect(await Bun.file(objectPath(key)).text()).toBe(parts.join(""));

    const stale = await fetch(await store.presignPart(key, uploadId, 1, 60, server.url), { method: "PUT", body: "late" });
    expect(stale.status).toBe(404);
    expect(await stale.text()).toContain("NoSuchUpload");
  });

  test("multipart: the object's SHA-256 is right whatever order parts arrive in and whichever are sent again", async () => {
    // Parts are hashed while they arrive (prefix-digest.ts); a part sent again after it was
    // hashed must not leave its old bytes in the digest.
    const partSize = 1024 * 1024;
    const whole = new Uint8Array(5 * partSize + 1234);
    for (let i = 0; i < whole.length; i += 65536) crypto.getRandomValues(whole.subarray(i, Math.min(whole.length, i + 65536)));
    const part = (n: number) => whole.slice((n - 1) * partSize, Math.min(whole.length, n * partSize));
    async function* once(bytes: Uint8Array) {
      yield bytes;
    }
    const upload = async (order: number[][], resend: number[]) => {
      const key = `test/${crypto.randomUUID()}/original`;
      const uploadId = await store.createMultipartUpload(key, "application/octet-stream", { partSize, totalSize: whole.length });
      const etags = new Map<number, string>();
      for (const group of order) {
        await Promise.all(group.map(async (n) => etags.set(n, (await store.putPart(key, uploadId, n, once(part(n)))).etag)));
      }
      for (const n of resend) {
        await store.putPart(key, uploadId, n, once(new Uint8Array(part(n).length).fill(7)));
        etags.set(n, (await store.putPart(key, uploadId, n, once(part(n)))).etag);
      }
      const digest = await store.completeMultipartUpload(key, uploadId, [1, 2, 3, 4, 5, 6].map((n) => ({ partNumber: n, etag: etags.get(n)! })));
      expect(digest).toEqual({ size: whole.length, sha256: sha256(whole).toString("hex") });
      expect(Bun.file(objectPath(key)).size).toBe(whole.length);
    };
    await upload([[1, 2], [3, 4], [5, 6]], []);
    await upload([[6], [5], [4], [3], [2], [1]], []);
    await upload([[2, 1], [3], [4, 5, 6]], [2]);
    await upload([[1], [2], [3], [4], [5], [6]], [6]);
  });
});
