/**
 * Links through real HTTP: saving (single, batch, duplicates, bad URLs), the crawl against web
 * sites the tests start on loopback (metadata, JSON-LD, icons, lazy images, caps, timeouts,
 * redirects, content types, charsets, robots.txt), the SSRF rules (loopback, private and
 * disallowed ports refused unless MEDIABOX_LINK_ALLOW_CIDRS / MEDIABOX_LINK_PORTS open them), the
 * air-gapped switch, politeness per domain, recrawl, the snapshot, search, similar images,
 * export and the purge. Every site listens on 127.0.0.x; nothing leaves the machine.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { KeyedLimiter } from "../src/keyed-limiter.ts";
import { parseRobots } from "../src/links/robots.ts";
import { checkAddress, parseAllowedCidrs } from "../src/net/url-policy.ts";
import { photo } from "./support/images.ts";
import { jobDone, pollApi, processed, waitFor } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { crawlOf } from "../src/links/link-crawls.ts";
import { documentFactsOf } from "../src/documents/document-facts.ts";

const LOOPBACK = { MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.0/8", MEDIABOX_LINK_PORTS: "any" };

/** Servers a test started (Mediabox and web sites), stopped after it whatever happened. */
const servers: TestServer[] = [];
const sites: Server<unknown>[] = [];
/** Handlers a site holds open; released before the sites stop. */
const held: (() => void)[] = [];
afterEach(async () => {
  for (const release of held.splice(0)) release();
  for (const site of sites.splice(0)) await site.stop(true);
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function mediabox(env: Record<string, string> = LOOPBACK, options: { clock?: ManualClock } = {}): Promise<{ server: TestServer; owner: Tenant }> {
  const server = await startTestServer({ env, ...options });
  servers.push(server);
  return { server, owner: await server.tenant({ tier: "CUSTOM" }) };
}

interface Site {
  origin: string;
  port: number;
  /** Paths asked for, in order. */
  hits: string[];
}

/** A web site on loopback answering with `route`; unknown paths are 404. */
function site(route: (path: string, request: Request) => Response | undefined | Promise<Response | undefined>, hostname = "127.0.0.1"): Site {
  const hits: string[] = [];
  const server = Bun.serve({
    hostname,
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      hits.push(url.pathname + url.search);
      return (await route(url.pathname, request)) ?? new Response("not found", { status: 404 });
    },
  });
  sites.push(server);
  return { origin: `http://${hostname}:${server.port}`, port: server.port!, hits };
}

const html = (body: string | Uint8Array, contentType = "text/html; charset=utf-8") =>
  new Response(body as BodyInit, { headers: { "content-type": contentType } });
const png = (bytes: Uint8Array) => new Response(bytes as BodyInit, { headers: { "content-type": "image/png" } });

/** A promise a handler awaits until the test (or afterEach) releases it. */
function gate(): { wait: Promise<void>; open: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  held.push(resolve);
  return { wait: promise, open: resolve };
}

const ARTICLE = [
  "The northern harbour is protected by a row of hinged tidal gates that lie flat on the seabed in calm weather.",
  "When a storm surge is forecast, compressed air is pumped into the flotation ballast caissons and the gates rise within thirty minutes.",
  "Each caisson is twenty metres wide and weighs four hundred tonnes; the row closes the whole channel against the sea.",
  "Engineers test the mechanism twice a year, at the spring equinox and before the autumn storms, with ships held outside.",
  "Since the gates were finished the harbour town has not flooded once, although three surges would have topped the old walls.",
];

function articlePage(extraHead = "", extraBody = ""): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Tidal gates | Harbour Weekly</title>
<meta property="og:title" content="How the harbour's tidal gates work">
<meta property="og:description" content="Hinged gates rise from the seabed when a storm surge comes.">
<meta property="og:image" content="/img/hero.png">
<meta property="og:site_name" content="Harbour Weekly">
<meta name="twitter:card" content="summary_large_image">
${extraHead}
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"How the harbour's tidal gates work","author":{"@type":"Person","name":"Ada Lovelace"},"datePublished":"2024-03-01T10:00:00Z"}</script>
</head><body><nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article><h1>How the harbour's tidal gates work</h1>
${ARTICLE.slice(0, 3).map((p) => `<p>${p}</p>`).join("\n")}
<figure><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/img/lazy.png" width="800" height="600" alt="The gates rising"><figcaption>The gates rising</figcaption></figure>
<h2>Testing the gates</h2>
${ARTICLE.slice(3).map((p) => `<p>${p}</p>`).join("\n")}
${extraBody}
</article><footer>© Harbour Weekly</footer></body></html>`;
}

/** The link's detail once its crawl has ended (completed, failed or blocked). */
async function crawled(owner: Tenant, id: string, timeoutMs = 90_000) {
  const res = await pollApi(
    owner,
    `/files/${id}`,
    (r) => r.status === 200 && ["completed", "failed", "blocked"].includes(r.body.crawl_status),
    { what: `link ${id} to be crawled`, timeoutMs },
  );
  return res.body;
}

async function save(owner: Tenant, body: Record<string, unknown>) {
  const res = await owner.api.post("/files/links", body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.media_type).toBe("link");
  return res.body;
}

describe("a crawled article", () => {
  test("metadata, JSON-LD, relative icon, lazy image, text, chunks, snapshot, search, similar images and export", async () => {
    const icon = await photo(3, 64, 64, "png");
    const hero = await photo(1, 480, 320, "png");
    const lazy = await photo(2, 480, 320, "png");
    const web = site((path) => {
      if (path === "/robots.txt") return new Response("User-agent: *\nDisallow: /private/\n", { headers: { "content-type": "text/plain" } });
      if (path === "/news/tidal-gates") return html(articlePage('<link rel="icon" href="../static/icon.png" sizes="64x64">'));
      if (path === "/static/icon.png") return png(icon);
      if (path === "/img/hero.png") return png(hero);
      if (path === "/img/lazy.png") return png(lazy);
      return undefined;
    });
    const { server, owner } = await mediabox();
    const url = `${web.origin}/news/tidal-gates?utm_source=newsletter`;
    const created = await save(owner, { url, tags: ["harbour"] });
    expect(created).toMatchObject({ crawl_status: "pending", source_url: url, domain: "127.0.0.1", title: null, tags: ["harbour"], extracted_images_count: 0 });

    const link = await crawled(owner, created.id);
    expect(link.crawl_status, JSON.stringify(link)).toBe("completed");
    expect(link.crawl_error).toBeNull();
    expect(link.title).toContain("tidal gates");
    expect(link.upload_description).toBe("Hinged gates rise from the seabed when a storm surge comes.");
    expect(link.og_metadata["og:title"]).toBe("How the harbour's tidal gates work");
    expect(link.og_metadata["og:site_name"]).toBe("Harbour Weekly");
    expect(link.og_metadata.json_ld[0]).toMatchObject({ "@type": "NewsArticle", author: { name: "Ada Lovelace" } });
    expect(link.og_metadata.final_url).toBe(url);
    expect(link.content_created_at).toBe("2024-03-01T10:00:00.000Z");
    expect(link.visible_text).toContain("flotation ballast caissons");
    expect(link.visible_text).not.toContain("Harbour Weekly</footer>");

    // The icon is our stored copy: it answers with the icon's bytes even once the site is gone.
    expect(link.favicon_url).toBeString();
    await sites.splice(0)[0]!.stop(true);
    const stored = await fetch(link.favicon_url);
    expect(stored.status).toBe(200);
    expect(new Uint8Array(await stored.arrayBuffer())).toEqual(new Uint8Array(icon));

    // og:image and the lazy-loaded <img data-src>, as image files beside the link.
    expect(link.extracted_images_count).toBe(2);
    expect(link.extracted_images.map((i: { source_url: string }) => i.source_url)).toEqual([`${web.origin}/img/hero.png`, `${web.origin}/img/lazy.png`]);
    const imageId = link.extracted_images[0].id;
    const image = (await owner.api.get(`/files/${imageId}`)).body;
    expect(image).toMatchObject({ media_type: "image", source_url: `${web.origin}/img/hero.png`, project_id: link.project_id });
    expect((await server.ctx.files.byId(imageId))!.parent_file_id).toBe(link.id);

    // robots.txt was asked once for the page, its icon and its images.
    expect(web.hits.filter((h) => h === "/robots.txt")).toHaveLength(1);
    expect(web.hits.filter((h) => h.startsWith("/news/"))).toHaveLength(1);

    // Listing by media type, and the library search over the page's text.
    const listed = (await owner.api.get("/files?media_types=link")).body;
    expect(listed.items.map((i: { id: string }) => i.id)).toEqual([link.id]);
    const found = (await owner.api.get("/files?search=caissons")).body;
    expect(found.items.map((i: { id: string }) => i.id)).toContain(link.id);

    // Chunks and the digitization view through the document endpoints; semantic search finds them.
    const chunks = (await owner.api.get(`/files/${link.id}/chunks`)).body;
    expect(chunks.total_chunks).toBeGreaterThan(0);
    const digitization = (await owner.api.get(`/files/${link.id}/digitization`)).body;
    expect(digitization.pages[0].elements.map((e: { type: string }) => e.type)).toContain("heading");
    const search = await owner.api.post("/files/search", { query: "ballast caissons storm surge", limit: 5 });
    expect(search.status, JSON.stringify(search.body)).toBe(200);
    expect(search.body.results[0].document_id).toBe(link.id);

    // The snapshot: inert HTML with the lazy image inlined.
    const snapshot = await owner.api.get(`/files/${link.id}/snapshot`);
    expect(snapshot.status).toBe(200);
    expect(snapshot.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(snapshot.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(snapshot.headers.get("content-security-policy")).toContain("sandbox");
    expect(snapshot.headers.get("x-content-type-options")).toBe("nosniff");
    expect(snapshot.body).toContain("flotation ballast caissons");
    expect(snapshot.body).toContain("data:image/png;base64,");
    expect(snapshot.body).not.toContain("<script");

    // Export includes the link's columns.
    const exported = await owner.api.post("/files/export", {
      format: "csv",
      columns: [{ field_key: "id" }, { field_key: "media_type" }, { field_key: "source_url" }, { field_key: "crawl_status" }, { field_key: "site_name" }],
      file_ids: [link.id],
    });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    const csv = await (await fetch(exported.body.download_url)).text();
    expect(csv).toContain(`${link.id},link,${url},completed,Harbour Weekly`);

    // The extracted images are images: they are processed and similar images answers for them.
    await processed(owner, imageId, 120_000);
    const similar = await owner.api.get(`/files/${imageId}/similar`);
    expect(similar.status, JSON.stringify(similar.body)).toBe(200);
    expect(similar.body.reference_image_id).toBe(imageId);
  }, 240_000);

  test("a title the user gave wins; an inline data: icon is stored; extract_images false stores none", async () => {
    const icon = await photo(4, 32, 32, "png");
    const web = site((path) => {
      if (path === "/a") return html(articlePage(`<link rel="icon" href="data:image/png;base64,${Buffer.from(icon).toString("base64")}">`));
      return undefined;
    });
    const { owner } = await mediabox();
    const created = await save(owner, { url: `${web.origin}/a`, title: "My own title", extract_images: false });
    const link = await crawled(owner, created.id);
    expect(link.crawl_status, JSON.stringify(link)).toBe("completed");
    expect(link.title).toBe("My own title");
    expect(link.extracted_images_count).toBe(0);
    expect(web.hits).not.toContain("/img/hero.png");
    const stored = await fetch(link.favicon_url);
    expect(new Uint8Array(await stored.arrayBuffer())).toEqual(new Uint8Array(icon));
  }, 120_000);
});

describe("what the crawler refuses or survives", () => {
  test("a redirect chain is followed to the final page", async () => {
    const web = site((path) => {
      if (path === "/old") return Response.redirect("/older", 301);
      if (path === "/older") return new Response(null, { status: 302, headers: { location: "/article" } });
      if (path === "/article") return html(articlePage());
      return undefined;
    });
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_MAX_IMAGES: "0" });
    const link = await crawled(owner, (await save(owner, { url: `${web.origin}/old` })).id);
    expect(link.crawl_status, JSON.stringify(link)).toBe("completed");
    expect(link.og_metadata.final_url).toBe(`${web.origin}/article`);
    expect(link.source_url).toBe(`${web.origin}/old`);
  }, 120_000);

  test("a huge page is read up to the byte cap; a page in an undeclared legacy charset is decoded", async () => {
    const filler = `<p>${"Breakwater masonry and tidal gauges. ".repeat(200)}</p>\n`;
    const huge = `<!DOCTYPE html><html><head><title>The endless page</title></head><body><article><h1>The endless page</h1>${filler.repeat(300)}</article></body></html>`;
    const legacy = new Uint8Array([...new TextEncoder().encode("<html><head><title>Caf"), 0xe9, ...new TextEncoder().encode("</title></head><body><p>Caf"), 0xe9, ...new TextEncoder().encode(" cr"), 0xe8, ...new TextEncoder().encode("me br"), 0xfb, ...new TextEncoder().encode("l"), 0xe9, 0x65, ...new TextEncoder().encode(" on the quay.</p></body></html>")]);
    const web = site((path) => {
      if (path === "/huge") return html(huge);
      if (path === "/legacy") return html(legacy, "text/html");
      return undefined;
    });
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_MAX_PAGE_BYTES: "65536" });
    expect(huge.length).toBeGreaterThan(2_000_000);
    const [hugeLink, legacyLink] = await Promise.all([save(owner, { url: `${web.origin}/huge` }), save(owner, { url: `${web.origin}/legacy` })]);
    const big = await crawled(owner, hugeLink.id);
    expect(big.crawl_status, JSON.stringify(big.crawl_error)).toBe("completed");
    expect(big.og_metadata.truncated).toBe(true);
    expect(big.size_bytes).toBe(65536);
    expect(big.title).toBe("The endless page");
    const decoded = await crawled(owner, legacyLink.id);
    expect(decoded.crawl_status, JSON.stringify(decoded.crawl_error)).toBe("completed");
    expect(decoded.og_metadata.charset).toBe("windows-1252");
    expect(decoded.title).toBe("Café");
    expect(decoded.visible_text).toContain("Café crème brûlée on the quay.");
  }, 120_000);

  test("a page slower than the timeout fails after its retries; non-HTML fails at once", async () => {
    const web = site(async (path) => {
      if (path === "/slow") {
        await gate().wait;
        return html(articlePage());
      }
      if (path === "/report.pdf") return new Response("%PDF-1.7\n...", { headers: { "content-type": "application/pdf" } });
      return undefined;
    });
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_TIMEOUT_SECONDS: "1", MEDIABOX_LINK_ROBOTS: "off" });
    const [slow, pdf] = await Promise.all([save(owner, { url: `${web.origin}/slow` }), save(owner, { url: `${web.origin}/report.pdf` })]);
    const notHtml = await crawled(owner, pdf.id);
    expect(notHtml).toMatchObject({ crawl_status: "failed", crawl_error: "not an HTML page (application/pdf)" });
    expect(web.hits.filter((h) => h === "/report.pdf")).toHaveLength(1);
    const timedOut = await crawled(owner, slow.id);
    expect(timedOut).toMatchObject({ crawl_status: "failed", crawl_error: "timed out after 1 s" });
    expect(web.hits.filter((h) => h === "/slow")).toHaveLength(3);
  }, 120_000);

  test("a 503 is retried and the crawl then completes; an image two pages show is stored once", async () => {
    const hero = await photo(6, 300, 200, "png");
    let unavailable = 1;
    const web = site((path) => {
      if (path === "/busy") return unavailable-- > 0 ? new Response("try later", { status: 503 }) : html(articlePage());
      if (path === "/again") return html(articlePage());
      if (path === "/img/hero.png") return png(hero);
      return undefined;
    });
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_ROBOTS: "off" });
    const first = await crawled(owner, (await save(owner, { url: `${web.origin}/busy` })).id);
    expect(first.crawl_status, JSON.stringify(first.crawl_error)).toBe("completed");
    expect(web.hits.filter((h) => h === "/busy")).toHaveLength(2);
    const second = await crawled(owner, (await save(owner, { url: `${web.origin}/again` })).id);
    expect(second.crawl_status).toBe("completed");
    // og:image is on both pages (the lazy image 404s): one image file, listed by both links.
    expect(first.extracted_images.map((i: { id: string }) => i.id)).toEqual(second.extracted_images.map((i: { id: string }) => i.id));
    expect(first.extracted_images_count).toBe(1);
    const images = (await owner.api.get("/files?media_types=image")).body;
    expect(images.total_count).toBe(1);
  }, 120_000);

  test("robots.txt is honoured by default: a disallowed page is blocked and never fetched", async () => {
    const web = site((path) => {
      if (path === "/robots.txt") return new Response("User-agent: *\nAllow: /\n\nUser-agent: Mediabox\nDisallow: /members/\n", { headers: { "content-type": "text/plain" } });
      if (path.startsWith("/members/")) return html(articlePage());
      return undefined;
    });
    const { owner } = await mediabox();
    const link = await crawled(owner, (await save(owner, { url: `${web.origin}/members/minutes` })).id);
    expect(link.crawl_status).toBe("blocked");
    expect(link.crawl_error).toContain("robots.txt");
    expect(web.hits).toEqual(["/robots.txt"]);
  }, 120_000);
});

describe("SSRF rules", () => {
  test("loopback is refused unless allowed, and nothing is fetched", async () => {
    const web = site((path) => (path === "/" ? html(articlePage()) : undefined));
    const { owner } = await mediabox({ MEDIABOX_LINK_PORTS: "any" });
    const link = await crawled(owner, (await save(owner, { url: `${web.origin}/` })).id);
    expect(link).toMatchObject({ crawl_status: "blocked", crawl_error: "blocked address 127.0.0.1 (loopback); MEDIABOX_LINK_ALLOW_CIDRS lists the ranges the crawler may reach" });
    expect(web.hits).toEqual([]);
  }, 120_000);

  test("a redirect to 127.0.0.1 or to a private address is blocked when only the first site is allowed", async () => {
    const inside = site((path) => (path === "/secret" ? html("<p>intranet secret</p>") : undefined));
    const web = site((path) => {
      if (path === "/to-loopback") return Response.redirect(`http://127.0.0.1:${inside.port}/secret`, 302);
      if (path === "/to-private") return Response.redirect("http://10.0.0.1/admin", 302);
      if (path === "/to-metadata") return Response.redirect("http://169.254.169.254/latest/meta-data/", 302);
      return undefined;
    }, "127.0.0.2");
    // Only 127.0.0.2 (and, to show the metadata rule, all of link-local) is allowed.
    const { owner } = await mediabox({ MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.2/32, 169.254.0.0/16", MEDIABOX_LINK_PORTS: "any", MEDIABOX_LINK_ROBOTS: "off" });
    const [loop, priv, meta] = await Promise.all(["/to-loopback", "/to-private", "/to-metadata"].map((path) => save(owner, { url: `${web.origin}${path}` })));
    expect(await crawled(owner, loop.id)).toMatchObject({
      crawl_status: "blocked",
      crawl_error: `blocked address 127.0.0.1 (loopback); MEDIABOX_LINK_ALLOW_CIDRS lists the ranges the crawler may reach (at http://127.0.0.1:${inside.port}/secret)`,
    });
    expect(await crawled(owner, priv.id)).toMatchObject({ crawl_status: "blocked", crawl_error: "blocked address 10.0.0.1 (private); MEDIABOX_LINK_ALLOW_CIDRS lists the ranges the crawler may reach (at http://10.0.0.1/admin)" });
    expect((await crawled(owner, meta.id)).crawl_error).toStartWith("blocked address 169.254.169.254 (cloud metadata service)");
    expect(inside.hits).toEqual([]);
  }, 120_000);

  test("only ports 80 and 443 by default", async () => {
    const web = site((path) => (path === "/" ? html(articlePage()) : undefined));
    const { owner } = await mediabox({ MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.0/8" });
    const link = await crawled(owner, (await save(owner, { url: `${web.origin}/` })).id);
    expect(link).toMatchObject({ crawl_status: "blocked", crawl_error: `port ${web.port} is not allowed (MEDIABOX_LINK_PORTS allows 80, 443)` });
    expect(web.hits).toEqual([]);
  }, 120_000);

  test("the air-gapped switch stores the URL and blocks the crawl with the reason", async () => {
    const web = site((path) => (path === "/" ? html(articlePage()) : undefined));
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_FETCH: "off" });
    const created = await save(owner, { url: `${web.origin}/` });
    const link = await crawled(owner, created.id);
    expect(link).toMatchObject({ crawl_status: "blocked", source_url: `${web.origin}/` });
    expect(link.crawl_error).toContain("MEDIABOX_LINK_FETCH=off");
    expect(web.hits).toEqual([]);
  }, 120_000);

  test("policy units: allowed CIDRs open their range only, never the metadata address; robots groups", () => {
    const allow = parseAllowedCidrs("10.20.0.0/16, fd00::/8 192.168.1.7");
    const ok = (ip: string) => checkAddress(ip, { allowPrivate: false, allowCidrs: allow }).ok;
    expect([ok("10.20.3.4"), ok("::ffff:10.20.3.4"), ok("fd12::1"), ok("192.168.1.7")]).toEqual([true, true, true, true]);
    expect([ok("10.21.0.1"), ok("192.168.1.8"), ok("127.0.0.1"), ok("0.0.0.0")]).toEqual([false, false, false, false]);
    expect(checkAddress("169.254.169.254", { allowPrivate: false, allowCidrs: parseAllowedCidrs("169.254.0.0/16") }).ok).toBe(false);
    expect(() => parseAllowedCidrs("10.0.0.0/33")).toThrow("is not an IP address or CIDR range");

    const rules = parseRobots("User-agent: *\nDisallow: /\n\nUser-agent: mediabox\nDisallow: /private\nAllow: /private/ok$\n", "mediabox");
    expect([rules.allows("/"), rules.allows("/private/x"), rules.allows("/private/ok"), rules.allows("/private/ok2")]).toEqual([true, false, true, false]);
    expect(parseRobots("User-agent: *\nDisallow: /*.pdf$\n", "mediabox").allows("/files/a.pdf")).toBe(false);
    expect(parseRobots("User-agent: *\nDisallow:\n", "mediabox").allows("/anything")).toBe(true);
  });
});

describe("saving", () => {
  /** Saving needs no crawl: these servers are air-gapped, so crawls end at once. */
  const offline = { MEDIABOX_LINK_FETCH: "off" };

  test("a duplicate URL (after normalization) answers with the existing file unless skip_duplicates is false", async () => {
    const { owner } = await mediabox(offline);
    const first = await save(owner, { url: "https://news.example/story?b=2&a=1" });
    const again = await owner.api.post("/files/links", { url: "HTTPS://News.Example:443/story?a=1&b=2&utm_campaign=x#comments" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.id);
    const forced = await owner.api.post("/files/links", { url: "https://news.example/story?a=1&b=2", skip_duplicates: false });
    expect(forced.status).toBe(201);
    expect(forced.body.id).not.toBe(first.id);
    // Another organization has its own library.
    const other = (await mediabox(offline)).owner;
    expect((await other.api.post("/files/links", { url: "https://news.example/story?a=1&b=2" })).status).toBe(201);
  }, 60_000);

  test("invalid URLs are 400 INVALID_LINK_URL; the placement is checked", async () => {
    const { owner } = await mediabox(offline);
    for (const [url, why] of [
      ["ftp://files.example/a", "only http and https URLs are accepted (ftp:)"],
      ["example.com/page", "not an absolute URL"],
      ["https://user:secret@example.com/", "URL carries credentials (user:password@)"],
      [`https://example.com/${"a".repeat(2100)}`, "URL longer than 2048 characters"],
    ] as const) {
      const res = await owner.api.post("/files/links", { url });
      expect(res.status, url).toBe(400);
      expect(res.body).toEqual({ code: "INVALID_LINK_URL", detail: `url: ${why}` });
    }
    expect((await owner.api.post("/files/links", {})).status).toBe(400);
    const missingFolder = await owner.api.post("/files/links", { url: "https://example.com/", folder_id: crypto.randomUUID() });
    expect(missingFolder.body.code).toBe("FOLDER_NOT_FOUND");
  }, 60_000);

  test("a batch answers per URL; more links than the tier's batch size is 400", async () => {
    const { server } = await mediabox(offline);
    const starter = await server.tenant({ tier: "STARTER" });
    const res = await starter.api.post("/files/links/batch", {
      links: [{ url: "https://a.example/one" }, { url: "javascript:alert(1)" }, { url: "https://a.example/one?utm_source=x" }, { url: "https://b.example/", title: "B" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 2, duplicates: 1, rejected: 1 });
    const [one, bad, dup, b] = res.body.results;
    expect(one).toMatchObject({ index: 0, status: "created", reason: null });
    // The answer shows each crawl as it is then: with fetching off, a worker that took the first
    // link's job while the others were saved (on PostgreSQL it is woken at the commit) has blocked it.
    expect(["pending", "blocked"]).toContain(one.crawl_status);
    expect((await crawled(starter, one.file_id)).crawl_status).toBe("blocked");
    expect(bad).toMatchObject({ index: 1, status: "rejected", file_id: null, code: "INVALID_LINK_URL", reason: "links.1.url: only http and https URLs are accepted (javascript:)" });
    expect(dup).toMatchObject({ index: 2, status: "duplicate", file_id: one.file_id });
    expect(b.status).toBe("created");
    expect((await starter.api.get(`/files/${b.file_id}`)).body.title).toBe("B");
    const tooMany = await starter.api.post("/files/links/batch", { links: Array.from({ length: 51 }, (_, i) => ({ url: `https://a.example/${i}` })) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.code).toBe("BATCH_TOO_LARGE");
  }, 60_000);
});

describe("politeness, recrawl and purge", () => {
  test("at most N fetches at once per domain and organization", async () => {
    let running = 0;
    let most = 0;
    const web = site(async (path) => {
      running += 1;
      most = Math.max(most, running);
      await Bun.sleep(150);
      running -= 1;
      return path.startsWith("/p/") ? html(articlePage()) : undefined;
    });
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_DOMAIN_CONCURRENCY: "1", MEDIABOX_LINK_MAX_IMAGES: "0" });
    const batch = await owner.api.post("/files/links/batch", { links: [1, 2, 3, 4].map((n) => ({ url: `${web.origin}/p/${n}` })) });
    for (const result of batch.body.results) expect((await crawled(owner, result.file_id)).crawl_status).toBe("completed");
    expect(most).toBe(1);

    const limiter = new KeyedLimiter(2);
    const order: string[] = [];
    const task = (name: string, ms: number) => limiter.run("org host", async () => {
      order.push(`start ${name}`);
      await Bun.sleep(ms);
      order.push(`end ${name}`);
    });
    await Promise.all([task("a", 30), task("b", 60), task("c", 1)]);
    expect(order.slice(0, 3)).toEqual(["start a", "start b", "end a"]);
    expect(limiter.active("org host")).toBe(0);
  }, 120_000);

  test("recrawl reads the page again; a second recrawl while one runs is 409", async () => {
    let version = 1;
    let hold: Promise<void> | null = null;
    const web = site(async (path) => {
      if (path !== "/page") return undefined;
      if (hold) await hold;
      return html(`<html><head><title>Version ${version}</title></head><body><article><p>${ARTICLE[0]} Revision ${version === 1 ? "alpha" : "bravo"}.</p></article></body></html>`);
    });
    const { owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_ROBOTS: "off" });
    const first = await crawled(owner, (await save(owner, { url: `${web.origin}/page` })).id);
    expect(first.visible_text).toContain("Revision alpha");
    version = 2;
    const held = gate();
    hold = held.wait;
    const again = await owner.api.post(`/files/${first.id}/recrawl`);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ id: first.id, crawl_status: "pending" });
    expect(again.body.job_id).toBeString();
    const busy = await owner.api.post(`/files/${first.id}/recrawl`);
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("CRAWL_IN_PROGRESS");
    // A cancelled crawl leaves the link pending with nothing to move it on: recrawl takes it over.
    expect((await owner.api.post(`/job/${again.body.job_id}/cancel`)).status).toBe(200);
    expect((await jobDone(owner, again.body.job_id)).status).toBe("cancelled");
    held.open();
    hold = null;
    const third = await owner.api.post(`/files/${first.id}/recrawl`);
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    const second = await crawled(owner, first.id);
    expect(second.crawl_status).toBe("completed");
    expect(second.visible_text).toContain("Revision bravo");
    // The title came from the first crawl and stays; a user's edit would too.
    expect(second.title).toBe("Version 1");
    const notALink = await owner.api.post(`/files/${second.extracted_images[0]?.id ?? crypto.randomUUID()}/recrawl`);
    expect([400, 404]).toContain(notALink.status);
  }, 120_000);

  test("a deleted link's icon, snapshot and chunks are purged with it", async () => {
    const icon = await photo(5, 32, 32, "png");
    const web = site((path) => {
      if (path === "/a") return html(articlePage('<link rel="icon" href="/icon.png">'));
      if (path === "/icon.png") return png(icon);
      return undefined;
    });
    const clock = new ManualClock(Date.now());
    const { server, owner } = await mediabox({ ...LOOPBACK, MEDIABOX_LINK_MAX_IMAGES: "0" }, { clock });
    const link = await crawled(owner, (await save(owner, { url: `${web.origin}/a` })).id);
    expect(link.crawl_status, JSON.stringify(link.crawl_error)).toBe("completed");
    const crawl = (await crawlOf(server.ctx.sql, link.id))!;
    const keys = [crawl.faviconBlobKey!, crawl.snapshotBlobKey!];
    for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeGreaterThan(0);
    // Embedding of its chunks runs as its own job: wait for it so the purge finds its vectors.
    await waitFor(async () => (await documentFactsOf(server.ctx.sql, link.id)).embeddingStatus === "completed", { what: "the link's chunks to be embedded" });
    expect((await owner.api.delete(`/files/${link.id}`)).status).toBe(200);
    clock.advance(31 * 24 * 3600 * 1000);
    expect(await purgeDeletedFiles(server.ctx)).toBeGreaterThanOrEqual(1);
    for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeNull();
    expect(await server.ctx.sql.one("SELECT count(*) AS n FROM document_chunks WHERE file_id = ?", [link.id])).toEqual({ n: 0 });
    expect(await server.ctx.files.byId(link.id)).toBeNull();
  }, 120_000);
});
