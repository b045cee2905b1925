/**
 * The dashboard sends large files straight to an S3 bucket, another origin: the page's CSP must
 * let it connect there, and the bucket's CORS rules must let the browser PUT and read the ETag.
 * The appliance checks the rules at start (a warning naming what is missing) and the test
 * deployments apply the rule the README gives.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PutBucketCorsCommand } from "@aws-sdk/client-s3";
import { systemClock } from "../src/clock.ts";
import { BROWSER_UPLOAD_RULE, browserUploadGap } from "../src/storage/bucket-cors.ts";
import { makeS3Client } from "../src/storage/presigner.ts";
import { S3BlobStore } from "../src/storage/s3-store.ts";
import { startS3Server, type S3Fixture } from "./support/s3-server.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

const PAGE = "https://media.example.org";

describe("browserUploadGap", () => {
  test("the README's rule allows any page; no rule allows none", () => {
    expect(browserUploadGap([BROWSER_UPLOAD_RULE], PAGE)).toBeNull();
    expect(browserUploadGap([BROWSER_UPLOAD_RULE], null)).toBeNull();
    expect(browserUploadGap([], PAGE)).toBe(`no CORS rule of the bucket allows ${PAGE}`);
  });

  test("a rule narrowed to the page's origin, or a pattern of it, is enough; another origin is not", () => {
    const narrowed = { ...BROWSER_UPLOAD_RULE, AllowedOrigins: [PAGE] };
    expect(browserUploadGap([narrowed], PAGE)).toBeNull();
    expect(browserUploadGap([{ ...narrowed, AllowedOrigins: ["https://*.example.org"] }], PAGE)).toBeNull();
    expect(browserUploadGap([narrowed], "https://other.example.org")).toContain("no CORS rule");
    // Without --public-url the page could be anywhere: only `*` will do.
    expect(browserUploadGap([narrowed], null)).toContain("every origin");
  });

  test("each missing part is named: PUT, the signed upload's headers, the ETag", () => {
    expect(browserUploadGap([{ ...BROWSER_UPLOAD_RULE, AllowedMethods: ["GET"] }], PAGE)).toContain("do not allow PUT");
    expect(browserUploadGap([{ ...BROWSER_UPLOAD_RULE, AllowedHeaders: ["content-type"] }], PAGE)).toContain("x-amz-checksum-sha256");
    expect(browserUploadGap([{ ...BROWSER_UPLOAD_RULE, AllowedHeaders: ["Content-Type", "X-Amz-*"] }], PAGE)).toBeNull();
    expect(browserUploadGap([{ ...BROWSER_UPLOAD_RULE, ExposeHeaders: [] }], PAGE)).toContain("ETag");
    // Two rules each lacking something do not add up to one that allows it.
    expect(browserUploadGap([{ ...BROWSER_UPLOAD_RULE, ExposeHeaders: [] }, { ...BROWSER_UPLOAD_RULE, AllowedMethods: ["GET"] }], PAGE)).toContain("ETag");
  });
});

describe("on a real S3 server", () => {
  let s3: S3Fixture;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(() => s3?.close());

  test("the store reads the bucket's rules: none at first, then the README's", async () => {
    if (s3.server !== "versitygw") return console.warn("skipped: s3rver keeps no CORS rules of a bucket made as a directory");
    const client = makeS3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = new S3BlobStore(client, s3.bucket, systemClock);
    expect(await store.crossOriginStore().browserUploadGap(PAGE)).toBe(`no CORS rule of the bucket allows ${PAGE}`);
    await client.send(new PutBucketCorsCommand({ Bucket: s3.bucket, CORSConfiguration: { CORSRules: [{ ...BROWSER_UPLOAD_RULE, ExposeHeaders: [] }] } }));
    expect(await store.browserUploadGap(PAGE)).toContain("ETag");
    await s3.allowBrowserUploads(s3.bucket);
    expect(await store.browserUploadGap(PAGE)).toBeNull();
  });

  test("the dashboard page lets the browser connect to the bucket's origin", async () => {
    const server: TestServer = await startTestServer({ env: s3.env });
    try {
      const res = await fetch(server.url + "/");
      const connect = (res.headers.get("content-security-policy") ?? "").split("; ").find((d) => d.startsWith("connect-src"));
      expect(connect).toBe(`connect-src 'self' ws: wss: ${new URL(server.ctx.config.s3Endpoint!).origin}`);
    } finally {
      await server.close();
    }
  });
});

test("with the local store the page connects to its own origin only", async () => {
  if (sharedDeployment()) return console.warn("skipped: a shared deployment's store is a bucket");
  const server = await startTestServer();
  try {
    const res = await fetch(server.url + "/");
    expect(res.headers.get("content-security-policy")).toContain("connect-src 'self' ws: wss:; ");
  } finally {
    await server.close();
  }
});
