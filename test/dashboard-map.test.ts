/**
 * The Map page and a photo's Info in Debian's chromium: located photos as clusters on the
 * offline world map (no request leaves the appliance), a cluster's photos with the place's name,
 * zooming into it splits it, dragging and the keyboard move and zoom; a photo's page shows its
 * camera, exposure, local time, place and a small map that opens the Map there; with no located
 * photo the page says why. Camera facts are stored by the appliance's own writer (which names
 * the place with the offline gazetteer). Phone and desktop widths, without sideways scroll or
 * failed requests.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { noCameraFacts, storeCameraFacts } from "../src/camera/camera-facts.ts";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { photo } from "./support/images.ts";
import { waitFor } from "./support/polling.ts";
import { insertFileRow, insertThumbnailRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

const DESKTOP = 1440;
// Each page comes from an address of its own (x-forwarded-for): the sign-in page's anonymous
// requests are limited to 5 a minute per address.
let server: TestServer;
let tenant: Tenant;
let browser: Browser;
const ids: Record<string, string> = {};

async function located(name: string, seed: number, latitude: number, longitude: number, extra: Partial<ReturnType<typeof noCameraFacts>> = {}) {
  const db = server.ctx.sql;
  const takenAt = extra.takenAt ?? `2021-06-0${1 + (seed % 8)}T10:34:56.000Z`;
  const id = await insertFileRow(db, { orgId: tenant.orgId, projectId: await defaultProjectOf(db, tenant.orgId), filename: name, contentCreatedAt: takenAt });
  await storeCameraFacts(db, tenant.orgId, id, { ...noCameraFacts(), latitude, longitude, takenAt, ...extra });
  await insertThumbnailRow(server.ctx, id, await photo(seed, 256, 192), { width: 256, height: 192 });
  ids[name] = id;
}

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
  await located("eiffel.jpg", 1, 48.8584, 2.2945, {
    make: "Apple",
    model: "iPhone 12 Pro",
    lens: "iPhone 12 Pro back triple camera 4.2mm f/1.6",
    focalLengthMm: 4.2,
    focalLength35mm: 26,
    fNumber: 1.6,
    exposureSeconds: 1 / 120,
    iso: 32,
    takenAt: "2021-06-01T10:34:56.000Z",
    takenAtOffset: "+02:00",
    takenAtSource: "EXIF DateTimeOriginal",
    altitudeM: 35,
  });
  await located("louvre.jpg", 2, 48.8606, 2.3376);
  await located("notre-dame.jpg", 3, 48.853, 2.3499);
  await located("tokyo-tower.jpg", 4, 35.6586, 139.7454);
  await located("shibuya.jpg", 5, 35.6595, 139.7005);
  await located("liberty.jpg", 6, 40.6892, -74.0445);
  await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: await defaultProjectOf(server.ctx.sql, tenant.orgId), filename: "nowhere.jpg" });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Every request the page makes goes to the appliance itself, or to its own bucket for the thumbnails of a deployment that keeps blobs there. */
function outsideRequests(page: Page): string[] {
  const { storage, s3Endpoint, s3Bucket } = server.config;
  const own = [server.url, "data:", ...(storage === "s3" ? [`${s3Endpoint!.replace(/\/$/, "")}/${s3Bucket}/`] : [])];
  const outside: string[] = [];
  page.on("request", (r) => !own.some((prefix) => r.url().startsWith(prefix)) && outside.push(r.url()));
  return outside;
}

const viewBox = (page: Page) => page.locator("svg.world-map").first().getAttribute("viewBox").then((v) => v!.split(" ").map(Number));

for (const width of [WIDTHS.phone, DESKTOP]) {
  test(`at ${width} px the map opens on the photos' clusters; a cluster lists its photos and zooming in splits it`, async () => {
    const page = await newPage(browser, width, 900, { locale: "en-US", timezoneId: "UTC" });
    const failures = watchFailures(page);
    const outside = outsideRequests(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/map`);
      await page.getByRole("heading", { name: "Map", level: 1 }).waitFor({ timeout: 30_000 });
      await page.getByText("6 photos with a location in view").waitFor({ timeout: 30_000 });
      const paris = page.getByRole("button", { name: /^3 photos at 48\.8/ });
      await paris.waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: /^2 photos at 35\.6/ }).waitFor();
      await page.getByRole("button", { name: /^1 photo at 40\.689/ }).waitFor();
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ animations: "disabled", path: join(SHOTS, `map-${width}.png`) });

      await paris.click();
      const heading = page.getByRole("heading", { name: /^3 photos near .*France$/ });
      await heading.waitFor({ timeout: 30_000 });
      // The list opens under the map, brought into view (below the screen on a phone) with the focus on its heading.
      expect(await heading.evaluate((el) => el.getBoundingClientRect().bottom <= innerHeight && document.activeElement === el)).toBe(true);
      await page.locator(".cluster-photos .photo-grid li").nth(2).waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "Zoom in here" }).click();
      // Paris's three photos, a few kilometres apart, are circles of their own up close.
      await page.getByRole("button", { name: /^1 photo at 48\.8/ }).nth(2).waitFor({ timeout: 30_000 });
      await page.getByText("3 photos with a location in view").waitFor({ timeout: 30_000 });
      // Up close the map is blank land: a scale bar and a note say how far and why.
      expect(await page.getByLabel("Scale").textContent()).toMatch(/^(1|2|5)(0*) (m|km)$/);
      await page.getByText("This offline map draws countries only").waitFor();
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ animations: "disabled", path: join(SHOTS, `map-paris-${width}.png`) });
      expect(outside).toEqual([]);
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
}

test("the map moves by dragging and the arrow keys, zooms by the wheel, the keyboard and the buttons", async () => {
  const page = await newPage(browser, DESKTOP, 900, { locale: "en-US" });
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, tenant.key);
    await page.goto(`${server.url}/#/map`);
    await page.getByText("6 photos with a location in view").waitFor({ timeout: 30_000 });
    const map = page.locator("svg.world-map");
    const start = await viewBox(page);

    await page.getByRole("button", { name: "Zoom in" }).click();
    await waitFor(async () => Math.abs((await viewBox(page))[2]! - start[2]! / 2) < 1e-3, { what: "the view to zoom in by one level", timeoutMs: 10_000 });

    const before = await viewBox(page);
    const r = (await map.boundingBox())!;
    await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
    await page.mouse.down();
    await page.mouse.move(r.x + r.width / 2 - 200, r.y + r.height / 2 - 50, { steps: 5 });
    await page.mouse.up();
    const dragged = await waitFor(async () => {
      const now = await viewBox(page);
      return now[0]! > before[0]! ? now : null;
    }, { what: "the drag to move the view east", timeoutMs: 10_000 });
    expect(dragged[2]!).toBeCloseTo(before[2]!, 3);

    await map.focus();
    await page.keyboard.press("ArrowLeft");
    await waitFor(async () => (await viewBox(page))[0]! < dragged[0]!, { what: "the left arrow to move the view west", timeoutMs: 10_000 });
    await page.keyboard.press("-");
    await waitFor(async () => Math.abs((await viewBox(page))[2]! - before[2]! * 2) < 1e-3, { what: "the view to zoom out by one level", timeoutMs: 10_000 });

    await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
    await page.mouse.wheel(0, -500);
    await waitFor(async () => (await viewBox(page))[2]! < before[2]! * 2, { what: "the wheel to zoom in", timeoutMs: 10_000 });
    // What the view holds is asked for again: a viewport box at the new zoom.
    const asked = page.waitForRequest((req) => req.url().includes("/files/locations?zoom=") && req.url().includes("bbox="), { timeout: 10_000 });
    await page.keyboard.press("ArrowRight");
    await asked;
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

for (const width of [WIDTHS.phone, DESKTOP]) {
  test(`at ${width} px a photo's page shows its camera, exposure, local time, place and a small map that opens the Map there`, async () => {
    const page = await newPage(browser, width, 900, { locale: "en-US", timezoneId: "UTC" });
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/files/${ids["eiffel.jpg"]}`);
      const info = page.getByRole("region", { name: "Info" });
      await info.waitFor({ timeout: 30_000 });
      const facts = Object.fromEntries(
        await info.locator("dt").evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])),
      );
      expect(facts).toMatchObject({
        Camera: "Apple iPhone 12 Pro",
        Lens: "iPhone 12 Pro back triple camera 4.2mm f/1.6",
        Exposure: "f/1.6 · 1/120 s · ISO 32 · 4.2 mm (26 mm in 35 mm terms)",
        Taken: "Jun 1, 2021, 12:34 PM (UTC+02:00)",
        Coordinates: "48.85840, 2.29450 · 35 m",
      });
      expect(facts.Place).toEndWith("France");
      const mini = info.getByRole("link", { name: /open on the map$/ });
      await mini.locator("svg path.land").waitFor({ timeout: 30_000 });
      await expectNoSidewaysScroll(page);
      await info.scrollIntoViewIfNeeded();
      await page.screenshot({ animations: "disabled", path: join(SHOTS, `photo-info-${width}.png`) });
      await mini.click();
      await page.getByRole("heading", { name: "Map", level: 1 }).waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: /^1 photo at 48\.858/ }).waitFor({ timeout: 30_000 });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
}

test("with no located photo, the map says where locations come from", async () => {
  const empty = await server.tenant({ tier: "CUSTOM" });
  const page = await newPage(browser, WIDTHS.phone, 844, { locale: "en-US" });
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, empty.key);
    await page.goto(`${server.url}/#/map`);
    await page.getByRole("heading", { name: "No photo has a location yet" }).waitFor({ timeout: 30_000 });
    await page.locator("svg.world-map path.land").waitFor();
    await expectNoSidewaysScroll(page);
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);
