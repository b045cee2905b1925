/**
 * The People pages in Debian's chromium: people as faces cut from their photos; a person's page
 * renames, takes out a face that is someone else (with Undo), merges another person in, hides;
 * the hidden are listed on demand; an empty organization is told what to do. Real face pictures
 * (from @vladmandic/human's face-match screenshot) are the thumbnails; faces and people are
 * seeded as the pipeline and the clustering job write them. Phone and desktop widths, without
 * sideways scroll or failed requests.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import sharp from "sharp";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { photo } from "./support/images.ts";
import { insertFaceRow, insertFileRow, insertPersonRow, insertThumbnailRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

const assets = join(dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "assets");
const DESKTOP = 1440;

let server: TestServer;
let tenant: Tenant;
let browser: Browser;
const people: Record<string, string> = {};

/** A 256 × 192 thumbnail: a face of the screenshot's grid (column, row) pasted at (left, top), 80 px; returns its box. */
async function thumbnail(column: number, row: number, seed: number, left: number, top: number) {
  const tops = [283, 395, 508, 620, 732, 845];
  const face = await sharp(join(assets, "screenshot-facematch.jpg"))
    .extract({ left: Math.round((column * 1920) / 18) + 3, top: tops[row]! + 3, width: 100, height: 100 })
    .resize(80, 80)
    .toBuffer();
  const jpeg = await sharp(await photo(seed, 256, 192)).composite([{ input: face, left, top }]).jpeg({ quality: 85 }).toBuffer();
  return { jpeg, box: { x_min: left / 256, y_min: top / 192, x_max: (left + 80) / 256, y_max: (top + 80) / 192 } };
}

async function seedPhoto(name: string, personId: string, face: [number, number], seed: number, takenAt: string) {
  const db = server.ctx.sql;
  const file = await insertFileRow(db, { orgId: tenant.orgId, projectId: await defaultProjectOf(db, tenant.orgId), filename: name, contentCreatedAt: takenAt });
  const { jpeg, box } = await thumbnail(face[0], face[1], seed, 40 + (seed % 5) * 25, 30 + (seed % 3) * 20);
  await insertThumbnailRow(server.ctx, file, jpeg, { width: 256, height: 192 });
  await insertFaceRow(server.ctx.sql, { orgId: tenant.orgId, fileId: file, personId, box });
}

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
  const db = server.ctx.sql;
  people.alice = await insertPersonRow(db, { orgId: tenant.orgId, name: "Alice" });
  people.bob = await insertPersonRow(db, { orgId: tenant.orgId, name: "Bob" });
  people.unnamed = await insertPersonRow(db, { orgId: tenant.orgId });
  await seedPhoto("alice-beach.jpg", people.alice, [0, 0], 1, "2024-07-02T10:00:00Z");
  await seedPhoto("alice-garden.jpg", people.alice, [0, 0], 2, "2024-05-02T10:00:00Z");
  await seedPhoto("bob-at-the-party.jpg", people.alice, [2, 1], 3, "2024-03-02T10:00:00Z");
  await seedPhoto("bob-hiking.jpg", people.bob, [2, 1], 4, "2024-02-02T10:00:00Z");
  await seedPhoto("bob-office.jpg", people.bob, [2, 1], 5, "2023-12-02T10:00:00Z");
  await seedPhoto("bob-skiing.jpg", people.unnamed, [2, 1], 6, "2023-01-02T10:00:00Z");
  await seedPhoto("bob-wedding.jpg", people.unnamed, [2, 1], 7, "2022-06-02T10:00:00Z");
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


/** Waits until every face picture in the page has been drawn (the screenshot shows faces). */
async function facesDrawn(page: Page, count: number): Promise<void> {
  await page.locator(".face-crop svg image").nth(count - 1).waitFor({ timeout: 30_000 });
}

for (const width of [WIDTHS.phone, DESKTOP]) {
  test(`at ${width} px People shows each person's face; a person's page shows their faces and photos`, async () => {
    const page = await newPage(browser, width, 900, { locale: "en-US" });
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/people`);
      await page.getByRole("heading", { name: "People", level: 1 }).waitFor({ timeout: 30_000 });
      const cards = page.locator(".people-grid .card");
      await cards.nth(2).waitFor({ timeout: 30_000 });
      // Named first, by name; then the unnamed.
      expect(await cards.locator(".name").allTextContents()).toEqual(["Alice", "Bob", "Unnamed person"]);
      await page.getByText("3 people").waitFor();
      await facesDrawn(page, 3);
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ animations: "disabled", path: join(SHOTS, `people-${width}.png`) });

      await cards.filter({ hasText: "Alice" }).click();
      await page.getByRole("heading", { name: "Alice", level: 1 }).waitFor({ timeout: 30_000 });
      await page.locator(".faces-grid .card").nth(2).waitFor({ timeout: 30_000 });
      await page.locator(".photo-grid li").nth(2).waitFor({ timeout: 30_000 });
      await facesDrawn(page, 4);
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ animations: "disabled", path: join(SHOTS, `person-${width}.png`), fullPage: true });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
}

test("a person is renamed, a face that is someone else is taken out (and put back) and moved to its person, another person merged in, and a person hidden", async () => {
  const page = await newPage(browser, DESKTOP, 900, { locale: "en-US" });
  const failures = watchFailures(page);
  const notice = page.locator("p.notice");
  try {
    await signIn(page, server.url, tenant.key);
    await page.goto(`${server.url}/#/people/${people.alice}`);
    await page.getByRole("heading", { name: "Alice", level: 1 }).waitFor({ timeout: 30_000 });

    await page.getByLabel("Name").fill("Alice Liddell");
    await page.getByRole("button", { name: "Save name" }).click();
    await page.getByRole("heading", { name: "Alice Liddell", level: 1 }).waitFor({ timeout: 30_000 });
    await notice.filter({ hasText: "Named Alice Liddell." }).waitFor();

    const faces = page.locator(".faces-grid .card");
    await faces.nth(2).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Not Alice Liddell: bob-at-the-party.jpg" }).click();
    await notice.filter({ hasText: "Took the face in bob-at-the-party.jpg out of Alice Liddell." }).waitFor({ timeout: 30_000 });
    await page.getByText("2 photos", { exact: true }).waitFor({ timeout: 30_000 });
    expect(await faces.count()).toBe(2);
    expect((await page.request.get(`${server.url}/api/v2/people/${people.alice}`, { headers: { authorization: `Bearer ${tenant.key}` } }).then((r) => r.json())).face_count).toBe(2);
    await notice.getByRole("button", { name: "Undo" }).click();
    await notice.filter({ hasText: "The face in bob-at-the-party.jpg is back." }).waitFor({ timeout: 30_000 });
    await faces.nth(2).waitFor({ timeout: 30_000 });
    await page.getByText("3 photos", { exact: true }).waitFor({ timeout: 30_000 });
    // Moved to the person it is this time.
    await page.getByLabel("Move the face in bob-at-the-party.jpg to").selectOption({ label: "Bob" });
    await notice.filter({ hasText: "Moved the face in bob-at-the-party.jpg to Bob." }).waitFor({ timeout: 30_000 });
    await page.getByText("2 photos", { exact: true }).waitFor({ timeout: 30_000 });

    await page.goto(`${server.url}/#/people/${people.bob}`);
    await page.getByRole("heading", { name: "Bob", level: 1 }).waitFor({ timeout: 30_000 });
    await page.getByText("Merge other people into Bob").click();
    const unnamed = page.locator(".merge .card").filter({ hasText: "Unnamed person" });
    await unnamed.waitFor({ timeout: 30_000 });
    expect(await page.locator(".merge .card .name").allTextContents()).toEqual(["Alice Liddell", "Unnamed person"]);
    await unnamed.getByRole("checkbox").check();
    await page.getByRole("button", { name: "Merge 1 into Bob" }).click();
    await notice.filter({ hasText: "Merged: Bob now has 5 photos." }).waitFor({ timeout: 30_000 });
    await page.locator(".faces-grid .card").nth(4).waitFor({ timeout: 30_000 });
    await page.locator(".photo-grid li").nth(4).waitFor({ timeout: 30_000 });
    expect((await page.request.get(`${server.url}/api/v2/people/${people.unnamed}`, { headers: { authorization: `Bearer ${tenant.key}` } })).status()).toBe(404);

    await page.getByRole("button", { name: "Hide from People" }).click();
    await notice.filter({ hasText: "Bob is hidden from People" }).waitFor({ timeout: 30_000 });
    await page.getByRole("link", { name: "People", exact: true }).first().click();
    const cards = page.locator(".people-grid .card");
    await page.getByText("1 person").waitFor({ timeout: 30_000 });
    expect(await cards.locator(".name").allTextContents()).toEqual(["Alice Liddell"]);
    await page.getByLabel("Show hidden people").check();
    await page.getByText("2 people").waitFor({ timeout: 30_000 });
    await cards.filter({ hasText: "hidden" }).filter({ hasText: "Bob" }).waitFor();
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

test("with nobody yet, People says how people appear", async () => {
  const empty = await server.tenant({ tier: "CUSTOM" });
  const page = await newPage(browser, WIDTHS.phone, 844, { locale: "en-US" });
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, empty.key);
    await page.goto(`${server.url}/#/people`);
    await page.getByRole("heading", { name: "No people yet" }).waitFor({ timeout: 30_000 });
    await page.getByText("a face seen in two photos becomes a person").waitFor();
    expect(await page.getByRole("link", { name: "Upload photos" }).getAttribute("href")).toBe("#/upload");
    await expectNoSidewaysScroll(page);
    await page.screenshot({ animations: "disabled", path: join(SHOTS, "people-empty-390.png"), fullPage: true });
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);
