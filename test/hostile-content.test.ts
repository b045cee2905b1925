/**
 * User-supplied blobs can never attack the user, through real HTTP: SVGs with active content are
 * refused wherever bytes come in (streaming upload, batch, intent completion), however they hide
 * it (a 70 KiB comment first, case and whitespace variants, CDATA, entities, DTD tricks); stored
 * blobs are served inert (nosniff, a sandboxing CSP, attachment for active types) whatever a
 * signed URL asks for; signed download URLs stay short whatever the file name; the single-shot
 * PUT's Content-Type is signed; aborting an upload intent needs EDIT, as the README says.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { LOCAL_BUCKET, LOCAL_S3_PATH, type LocalBlobStore } from "../src/storage/local-store.ts";
import { makeS3Client } from "../src/storage/presigner.ts";
import { png, text } from "./support/fixtures.ts";
import { startS3Server, type S3Fixture } from "./support/s3-server.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

let server: TestServer;
let store: LocalBlobStore;
beforeAll(async () => {
  server = await startTestServer();
  store = server.ctx.blobs as LocalBlobStore;
});
afterAll(() => server.close());

const SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="8" height="8">';
const svg = (body: string, prolog = "") => `${prolog}${SVG_OPEN}${body}</svg>`;
/** A comment longer than the 64 KiB head the detector used to read. */
const LONG_COMMENT = `<!--${" nothing to see here ".repeat(3_500)}-->\n`;
const SCRIPT_AFTER_COMMENT = svg("<script>alert(document.domain)</script>", LONG_COMMENT);
const ONERROR_AFTER_COMMENT = svg('<image href="missing.png" onerror="alert(document.domain)"/>', LONG_COMMENT);
const CLEAN_SVG = svg('<rect width="8" height="8" fill="teal"/>');

async function* chunks(...parts: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* parts;
}

const sha256Hex = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

function uploadForm(bytes: Uint8Array | string, filename: string, type = "image/svg+xml") {
  const form = new FormData();
  form.append("file", new Blob([typeof bytes === "string" ? text(bytes) : (bytes as Uint8Array<ArrayBuffer>)], { type }), filename);
  return form;
}

async function fileCount(tenant: Tenant): Promise<number> {
  return (await server.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM files WHERE org_id = ?", [tenant.orgId]))!.n;
}

/** Every file under the store's objects directory (nothing of a refused upload may remain). */
function storedObjects(): string[] {
  const root = join(server.dataDir, "blobs", "objects");
  return existsSync(root) ? (readdirSync(root, { recursive: true }) as string[]) : [];
}

/** Creates a single-shot intent for `bytes`, PUTs them with the returned headers, and completes it. */
async function throughIntent(tenant: Tenant, bytes: Uint8Array, filename: string, contentType = "image/svg+xml") {
  const created = await tenant.api.post("/files/uploads", { filename, content_type: contentType, size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes) });
  expect(created.status).toBe(201);
  const put = await fetch(created.body.presigned_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: created.body.headers });
  expect(put.status).toBe(200);
  const completed = await tenant.api.post(`/files/uploads/${created.body.upload_id}/complete`, {});
  return { created: created.body, completed };
}

function expectInertHeaders(res: Response) {
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp.split(";").map((d) => d.trim())).toContain("sandbox");
  expect(csp).toContain("default-src 'none'");
}

describe("SVGs with active content are refused wherever bytes come in", () => {
  test("POST /files/upload: script or onerror after a 70 KiB comment is 415 with the reason, nothing stored", async () => {
    const tenant = await server.tenant();
    const before = storedObjects().length;
    for (const [label, body, why] of [
      ["script", SCRIPT_AFTER_COMMENT, "<script>"],
      ["onerror", ONERROR_AFTER_COMMENT, "onerror"],
    ] as const) {
      expect(text(body).byteLength, label).toBeGreaterThan(70 * 1024);
      const res = await tenant.api.form("/files/upload", uploadForm(body, "logo.svg"));
      expect(res.status, label).toBe(415);
      expect(res.body.code, label).toBe("UNSUPPORTED_FILE_TYPE");
      expect(res.body.detail, label).toContain("SVG with active content");
      expect(res.body.detail, label).toContain(why);
    }
    expect(await fileCount(tenant)).toBe(0);
    expect(storedObjects().length).toBe(before);
  });

  test("POST /files/upload/batch: the hostile SVG is rejected with the reason, the rest stored", async () => {
    const tenant = await server.tenant();
    const form = new FormData();
    form.append("files", new Blob([png(4, 4, 3) as Uint8Array<ArrayBuffer>]), "ok.png");
    form.append("files", new Blob([text(SCRIPT_AFTER_COMMENT)]), "bad.svg");
    form.append("files", new Blob([text(ONERROR_AFTER_COMMENT)]), "worse.svg");
    const res = await tenant.api.form("/files/upload/batch", form);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ total_files: 3, accepted_files: 1, rejected_files: 2 });
    expect(res.body.rejections).toEqual([
      { file_index: 1, filename: "bad.svg", code: "UNSUPPORTED_FILE_TYPE", reason: expect.stringContaining("<script>") },
      { file_index: 2, filename: "worse.svg", code: "UNSUPPORTED_FILE_TYPE", reason: expect.stringContaining("onerror") },
    ]);
    expect(await fileCount(tenant)).toBe(1);
  });

  test("intent completion: 415 with the reason, the intent FAILED and its bytes removed", async () => {
    const tenant = await server.tenant();
    const bytes = text(ONERROR_AFTER_COMMENT);
    const { created, completed } = await throughIntent(tenant, bytes, "diagram.svg");
    expect(completed.status).toBe(415);
    expect(completed.body.code).toBe("UNSUPPORTED_FILE_TYPE");
    expect(completed.body.detail).toContain("onerror");
    const intent = await tenant.api.get(`/files/uploads/${created.upload_id}`);
    expect(intent.body.status).toBe("FAILED");
    expect(intent.body.error_message).toContain("onerror");
    expect(await store.size(created.object_key)).toBeNull();
    expect(await fileCount(tenant)).toBe(0);
  });

  test("every disguise of active content is refused; ordinary SVGs (entities, embedded PNGs, fonts, local <use>) are accepted", async () => {
    const tenant = await server.tenant({ tier: "ENTERPRISE" });
    const refused: [string, string][] = [
      ["upper-case SCRIPT", svg("<SCRIPT>alert(1)</SCRIPT>")],
      ["namespaced script", svg('<s:script xmlns:s="http://www.w3.org/2000/svg">alert(1)</s:script>')],
      ["CDATA script", svg("<script><![CDATA[alert(1)]]></script>")],
      ["handler split by newlines", svg('<rect\n  OnLoad\n  =\n  "alert(1)"/>')],
      ["handler without a space", svg('<image href="x.png"onerror="alert(1)"/>')],
      ["javascript: link", svg('<a href="javascript:alert(1)"><rect width="1" height="1"/></a>')],
      ["xlink:href with a tab and character references", svg('<a xlink:href="&#x6A;ava&#x09;script:alert(1)"><rect width="1" height="1"/></a>')],
      ["foreignObject", svg('<foreignObject width="8" height="8"><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>')],
      ["iframe", svg('<iframe src="https://example.com"/>')],
      ["object", svg('<object data="x.html"/>')],
      ["embed", svg('<embed src="x.swf"/>')],
      ["external <use>", svg('<use href="https://evil.example/sprite.svg#icon"/>')],
      ["external <use> via xlink", svg('<use xlink:href="other.svg#icon"/>')],
      ["animated href", svg('<a><animate attributeName="href" values="javascript:alert(1)"/><rect width="1" height="1"/></a>')],
      ["set of a handler", svg('<set attributeName="onmouseover" to="alert(1)"/>')],
      ["entity expanding to markup", svg("&x;", '<!DOCTYPE svg [<!ENTITY x "&#60;script&#62;alert(1)&#60;/script&#62;">]>')],
      ["entity hiding a scheme", svg('<a href="javascript&c;alert(1)"/>', '<!DOCTYPE svg [<!ENTITY c ":">]>')],
      ["external entity", svg("&x;", '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>')],
      ["default handler by ATTLIST", svg("", '<!DOCTYPE svg [<!ATTLIST svg onload CDATA "alert(1)">]>')],
      ["XSLT stylesheet", svg("", '<?xml version="1.0"?>\n<?xml-stylesheet type="text/xsl" href="evil.xsl"?>\n')],
      ["UTF-7 declaration", svg("", '<?xml version="1.0" encoding="UTF-7"?>\n')],
      ["XHTML namespace", svg('<g xmlns:h="http://www.w3.org/1999/xhtml"><h:img src="x"/></g>')],
      ["data: SVG", svg('<image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="/>')],
      ["script in a comment", svg("<!-- <script>alert(1)</script> -->")],
      ["javascript: in CSS", svg("<style>rect { background: url(javascript:alert(1)) }</style>")],
      ["xml:base", svg('<use xml:base="https://evil.example/" href="#a"/>')],
    ];
    for (const [label, body] of refused) {
      const res = await tenant.api.form("/files/upload", uploadForm(body, "icon.svg"));
      expect(res.status, label).toBe(415);
      expect(res.body.detail, label).toContain("SVG");
    }
    const accepted: [string, string][] = [
      [
        "Illustrator-style doctype with entities",
        svg(
          '<g xmlns:x="&ns_extend;"><rect width="8" height="8"/></g>',
          '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [\n\t<!ENTITY ns_extend "http://ns.adobe.com/Extensibility/1.0/">\n]>\n',
        ),
      ],
      ["embedded PNG", svg(`<image width="4" height="4" href="data:image/png;base64,${Buffer.from(png(4, 4, 1)).toString("base64")}"/>`)],
      ["embedded font", svg("<style><![CDATA[@font-face { font-family: x; src: url(data:font/woff2;base64,d09GMgAB) } text { font-family: x }]]></style><text>hi</text>")],
      ["local <use>", svg('<defs><rect id="r" width="4" height="4"/></defs><use href="#r"/><use xlink:href="#r" x="4"/>')],
      ["link to a web page", svg('<a href="https://example.com/"><rect width="8" height="8"/></a>')],
    ];
    for (const [label, body] of accepted) {
      const res = await tenant.api.form("/files/upload", uploadForm(body, "icon.svg"));
      expect(res.status, label).toBe(201);
      expect(res.body.media_type, label).toBe("image");
    }
  });

  test("a 2,000-character comment before <svg><script> is an SVG, refused for its script; before a clean <svg> it is an image", async () => {
    const tenant = await server.tenant();
    const comment = `<!--${"c".repeat(2_000)}-->`;
    const hostile = await tenant.api.form("/files/upload", uploadForm(`${comment}<svg><script>alert(1)</script></svg>`, "notes.txt", "text/plain"));
    expect(hostile.status).toBe(415);
    expect(hostile.body.detail).toContain("SVG with active content");
    const clean = await tenant.api.form("/files/upload", uploadForm(`${comment}\n${CLEAN_SVG}`, "notes.txt", "text/plain"));
    expect(clean.status).toBe(201);
    expect(clean.body.media_type).toBe("image");
    expect((await tenant.api.get(`/files/${clean.body.image_id}`)).body.content_type).toBe("image/svg+xml");
    // Markdown that merely starts with a comment stays a document.
    const markdown = await tenant.api.form("/files/upload", uploadForm(`${comment}\n# Title\n\nSome *text*.\n`, "notes.md", "text/markdown"));
    expect(markdown.status).toBe(201);
    expect(markdown.body.media_type).toBe("document");
  });

  test("an SVG over 10 MB is refused with the reason", async () => {
    const tenant = await server.tenant();
    const filler = `<rect width="1" height="1"/>\n`.repeat(Math.ceil((10.5 * 1024 * 1024) / 28));
    const res = await tenant.api.form("/files/upload", uploadForm(svg(filler), "huge.svg"));
    expect(res.status).toBe(415);
    expect(res.body.detail).toContain("limited to 10 MB");
    expect(await fileCount(tenant)).toBe(0);
  });
});

describe("stored blobs are served inert", () => {
  // The inert headers are the appliance's own S3 endpoint's; with a bucket, original URLs are the bucket's and so are its headers.
  test.skipIf(sharedDeployment())("a clean SVG is accepted; its original URL answers nosniff, CSP sandbox and an attachment", async () => {
    const tenant = await server.tenant();
    const uploaded = await tenant.api.form("/files/upload", uploadForm(CLEAN_SVG, "badge.svg"));
    expect(uploaded.status).toBe(201);
    const detail = await tenant.api.get(`/files/${uploaded.body.image_id}`);
    expect(detail.body.content_type).toBe("image/svg+xml");
    const originalUrl: string = detail.body.original_url;
    for (const method of ["GET", "HEAD"]) {
      const res = await fetch(originalUrl, { method });
      expect(res.status, method).toBe(200);
      expectInertHeaders(res);
      expect(res.headers.get("content-type"), method).toBe("application/octet-stream");
      expect(res.headers.get("content-disposition"), method).toStartWith("attachment");
      expect(res.headers.get("content-disposition"), method).toContain('filename="badge.svg"');
      if (method === "GET") expect(await res.text()).toBe(CLEAN_SVG);
    }
    // The variant redirect for the original leads to the same inert answer.
    const redirect = await tenant.api.get(`/files/${uploaded.body.image_id}/variant/original`);
    expect(redirect.status).toBe(302);
    const viaRedirect = await fetch(redirect.headers.get("location")!);
    expectInertHeaders(viaRedirect);
    expect(viaRedirect.headers.get("content-disposition")).toStartWith("attachment");
  });

  // Signs for and reads through the local blob store's own endpoint, which a deployment with a bucket does not have.
  test.skipIf(sharedDeployment())("a signed URL that asks for text/html inline still comes back as an inert attachment", async () => {
    const key = `test/${crypto.randomUUID()}/original`;
    const html = "<!doctype html><html><body><script>alert(document.domain)</script></body></html>";
    await store.putObject(key, chunks(text(html)), 1024);
    // Signed with the appliance's own secret, exactly as a presigner would, so only the endpoint stands between it and the browser.
    const client = makeS3Client({ region: "us-east-1", endpoint: server.url + LOCAL_S3_PATH, forcePathStyle: true, credentials: store.credentials });
    const url = await getSignedUrl(
      client,
      new GetObjectCommand({ Bucket: LOCAL_BUCKET, Key: key, ResponseContentType: "text/html; charset=utf-8", ResponseContentDisposition: 'inline; filename="page.html"' }) as any,
      { expiresIn: 60 },
    );
    expect(new URL(url).searchParams.get("response-content-type")).toBe("text/html; charset=utf-8");
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expectInertHeaders(res);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="page.html"');
    expect(await res.text()).toBe(html);

    // XML and SVG types asked for by a URL are made opaque the same way; a raster image stays inline, still with the headers.
    for (const asked of ["image/svg+xml", "application/xhtml+xml", "text/xml"]) {
      const signed = await getSignedUrl(client, new GetObjectCommand({ Bucket: LOCAL_BUCKET, Key: key, ResponseContentType: asked }) as any, { expiresIn: 60 });
      const served = await fetch(signed, { method: "HEAD" });
      expect(served.headers.get("content-type"), asked).toBe("application/octet-stream");
      expect(served.headers.get("content-disposition"), asked).toBe("attachment");
    }
    const pngKey = `test/${crypto.randomUUID()}/original`;
    await store.putObject(pngKey, chunks(png(6, 6, 2)), 1024 * 1024);
    const image = await fetch(await store.presignGet(pngKey, { expiresInSeconds: 60, contentType: "image/png" }, server.url));
    expect(image.status).toBe(200);
    expectInertHeaders(image);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("content-disposition")).toBeNull();
    // Errors are XML from the same origin: inert too.
    const denied = await fetch(url.replace(/X-Amz-Signature=[0-9a-f]/, "X-Amz-Signature=z"));
    expect(denied.status).toBe(403);
    expectInertHeaders(denied);
  });

  test("a 3,000-character non-ASCII file name: the signed download URL stays short and serves the truncated name", async () => {
    const tenant = await server.tenant();
    const name = `${"Überraschungsbericht—日本語のファイル名🙂".repeat(100).slice(0, 3_000)}.png`;
    expect(name.length).toBeGreaterThan(3_000);
    const bytes = png(5, 5, 9);
    const uploaded = await tenant.api.form("/files/upload", uploadForm(bytes, name, "image/png"));
    expect(uploaded.status).toBe(201);
    const res = await tenant.api.get(`/files/${uploaded.body.image_id}/download`);
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(location.length).toBeLessThan(2_048);
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    // The inert headers are the appliance's own S3 endpoint's; a bucket answers with its own.
    if (!sharedDeployment()) expectInertHeaders(file);
    const disposition = file.headers.get("content-disposition")!;
    expect(disposition).toStartWith("attachment; ");
    const encoded = /filename\*=UTF-8''([^;]+)/.exec(disposition)![1]!;
    const served = decodeURIComponent(encoded);
    expect(served).toEndWith("….png");
    expect(new TextEncoder().encode(served).byteLength).toBeLessThanOrEqual(100);
    expect(name.startsWith(served.slice(0, -"….png".length))).toBe(true);
    expect(served).not.toContain("\uFFFD");
    const fallback = /filename="([^"]*)"/.exec(disposition)![1]!;
    expect(fallback).toMatch(/^[\x20-\x7e]+\.png$/);
    // The file keeps its whole name; only the download header is bounded.
    expect((await tenant.api.get(`/files/${uploaded.body.image_id}`)).body.filename).toBe(name);
  });
});

describe("upload intents", () => {
  test("the single-shot PUT's Content-Type is signed: another type is 403 and stores nothing, the signed one works", async () => {
    const tenant = await server.tenant();
    const bytes = png(7, 7, 4);
    const created = await tenant.api.post("/files/uploads", { filename: "photo.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes) });
    expect(created.status).toBe(201);
    expect(created.body.headers["Content-Type"]).toBe("image/png");
    const signed = new URL(created.body.presigned_url).searchParams.get("X-Amz-SignedHeaders")!.split(";");
    expect(signed).toContain("content-type");
    for (const [label, contentType] of [
      ["html", "text/html"],
      ["svg", "image/svg+xml"],
      ["png with a parameter", "image/png; x=1"],
    ] as const) {
      const put = await fetch(created.body.presigned_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: { ...created.body.headers, "Content-Type": contentType } });
      expect(put.status, label).toBe(403);
      expect(await put.text(), label).toContain("SignatureDoesNotMatch");
    }
    const { "Content-Type": _omitted, ...withoutType } = created.body.headers as Record<string, string>;
    const untyped = await fetch(created.body.presigned_url, { method: "PUT", body: new Blob([bytes as Uint8Array<ArrayBuffer>]), headers: withoutType });
    expect(untyped.status).toBe(403);
    expect(await store.size(created.body.object_key)).toBeNull();
    expect((await tenant.api.get(`/files/uploads/${created.body.upload_id}`)).body.status).toBe("PENDING");

    const put = await fetch(created.body.presigned_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: created.body.headers });
    expect(put.status).toBe(200);
    const completed = await tenant.api.post(`/files/uploads/${created.body.upload_id}/complete`, {});
    expect(completed.status).toBe(200);
    expect(completed.body.media_type).toBe("image");
  });

  test("a clean SVG completes through an intent", async () => {
    const tenant = await server.tenant();
    const { completed } = await throughIntent(tenant, text(svg('<circle r="3" cx="4" cy="4"/>', LONG_COMMENT)), "dot.svg");
    expect(completed.status).toBe(200);
    expect(completed.body.media_type).toBe("image");
  });

  test("DELETE /files/uploads/{id} is an edit: a view + edit key aborts, a view-only key is 403", async () => {
    const tenant = await server.tenant();
    const editor = await tenant.keyWith(["view", "edit"]);
    const viewer = await tenant.keyWith(["view"]);
    const bytes = png(3, 3, 8);
    const created = await editor.post("/files/uploads", { filename: "a.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes) });
    expect(created.status).toBe(201);
    const denied = await viewer.request("DELETE", `/files/uploads/${created.body.upload_id}`);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe("PERMISSION_DENIED");
    expect((await viewer.get(`/files/uploads/${created.body.upload_id}`)).body.status).toBe("PENDING");
    const aborted = await editor.request("DELETE", `/files/uploads/${created.body.upload_id}?reason=changed%20my%20mind`);
    expect(aborted.status).toBe(200);
    expect(aborted.body).toEqual({ upload_id: created.body.upload_id, aborted: true, reason: "changed my mind" });
    expect((await viewer.get(`/files/uploads/${created.body.upload_id}`)).body.status).toBe("FAILED");
    // Deleting a stored file, by contrast, needs DELETE.
    const uploaded = await editor.form("/files/upload", uploadForm(png(3, 3, 9), "b.png", "image/png"));
    expect(uploaded.status).toBe(201);
    expect((await editor.request("DELETE", `/files/${uploaded.body.image_id}`)).status).toBe(403);
  });
});

describe("with the S3 backend", () => {
  let s3: S3Fixture;
  let s3Server: TestServer;
  beforeAll(async () => {
    s3 = await startS3Server();
    s3Server = await startTestServer({ env: s3.env });
  });
  afterAll(async () => {
    await s3Server?.close();
    await s3?.close();
  });

  test("an SVG's presigned GET asks S3 for an opaque attachment, and the object is stored as one", async () => {
    const tenant = await s3Server.tenant();
    const uploaded = await tenant.api.form("/files/upload", uploadForm(CLEAN_SVG, "badge.svg"));
    expect(uploaded.status).toBe(201);
    const detail = await tenant.api.get(`/files/${uploaded.body.image_id}`);
    const url = new URL(detail.body.original_url);
    expect(url.origin).toBe(s3.endpoint);
    expect(url.searchParams.get("response-content-type")).toBe("application/octet-stream");
    expect(url.searchParams.get("response-content-disposition")).toStartWith('attachment; filename="badge.svg"');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-disposition")).toStartWith("attachment");
    expect(await res.text()).toBe(CLEAN_SVG);

    const row = (await s3Server.ctx.sql.one<{ blob_key: string }>("SELECT blob_key FROM files WHERE id = ?", [uploaded.body.image_id]))!;
    const client = makeS3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: row.blob_key }));
    expect(head.ContentType).toBe("application/octet-stream");
    expect(head.ContentDisposition).toBe("attachment");
  });

  test("intent completion fetches a small object whole, so a hostile SVG is refused there too", async () => {
    const tenant = await s3Server.tenant();
    const { created, completed } = await throughIntent(tenant, text(SCRIPT_AFTER_COMMENT), "diagram.svg");
    expect(completed.status).toBe(415);
    expect(completed.body.detail).toContain("<script>");
    expect((await tenant.api.get(`/files/uploads/${created.upload_id}`)).body.status).toBe("FAILED");
    const clean = await throughIntent(tenant, text(svg('<circle r="3" cx="4" cy="4"/>', LONG_COMMENT)), "dot.svg");
    expect(clean.completed.status).toBe(200);
    expect(clean.completed.body.media_type).toBe("image");
    // Nothing is left in scratch.
    const scratch = join(s3Server.dataDir, "tmp");
    expect(existsSync(scratch) ? readdirSync(scratch).filter((n) => n.startsWith("detect-")) : []).toEqual([]);
  });
});
