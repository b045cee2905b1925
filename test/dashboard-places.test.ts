/**
 * Projects and folders from the library's sidebar in Debian's chromium: create a project, a
 * folder and a subfolder, rename, move and delete them (the server's refusals shown as said); an
 * empty library explains what to do, and an empty result offers to clear the filters.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


test("an empty library says how to fill it; an empty result offers to clear the filters", async () => {
  const tenant = await server.tenant({ tier: "CUSTOM" });
  const page = await newPage(browser, WIDTHS.phone, 844);
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, tenant.key);
    await page.getByRole("heading", { name: "Nothing here yet: add your first files" }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("link", { name: "Upload files" }).getAttribute("href")).toBe("#/upload");
    await expectNoSidewaysScroll(page);
    await page.screenshot({ path: join(SHOTS, "library-empty-390.png"), fullPage: true });
    await page.getByLabel("Search").fill("nothing at all");
    await page.getByText("No file matches these filters.").waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Clear the filters" }).click();
    await page.getByRole("heading", { name: "Nothing here yet: add your first files" }).waitFor({ timeout: 30_000 });
    expect(await page.getByLabel("Search").inputValue()).toBe("");
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

test("projects and folders are created, renamed, moved and deleted from the sidebar", async () => {
  const tenant = await server.tenant({ tier: "CUSTOM" });
  const page = await newPage(browser, WIDTHS.laptop, 900);
  const failures = watchFailures(page);
  const places = page.getByRole("navigation", { name: "Projects and folders" });
  const manage = page.getByRole("group", { name: "Manage projects and folders" });
  const notice = page.locator("p.notice");
  try {
    await signIn(page, server.url, tenant.key);
    await manage.getByRole("button", { name: "New project" }).click();
    await manage.getByLabel("New project's name").fill("Harbour works");
    await manage.getByRole("button", { name: "Create" }).click();
    await notice.filter({ hasText: "Project Harbour works created" }).waitFor({ timeout: 30_000 });
    await page.getByRole("heading", { name: "Library: Harbour works" }).waitFor();
    await places.getByRole("button", { name: "Harbour works" }).waitFor();
    const project = (await tenant.api.get("/projects?limit=100")).body.items.find((p: { name: string }) => p.name === "Harbour works");
    expect(project).toBeDefined();

    await manage.getByRole("button", { name: "New folder" }).click();
    await manage.getByLabel(/New folder's name/).fill("Invoices");
    await manage.getByRole("button", { name: "Create" }).click();
    await notice.filter({ hasText: "Folder Invoices created in Harbour works" }).waitFor({ timeout: 30_000 });
    await manage.getByRole("button", { name: "New subfolder" }).click();
    await manage.getByLabel(/New folder's name/).fill("2026");
    await manage.getByRole("button", { name: "Create" }).click();
    await notice.filter({ hasText: "Folder 2026 created in Invoices" }).waitFor({ timeout: 30_000 });
    const invoices = (await tenant.api.get(`/folders?project_id=${project.id}`)).body.items[0];
    expect(invoices).toMatchObject({ name: "Invoices", folder_count: 1 });

    // Renamed, then moved up to the project's top level.
    await manage.getByRole("button", { name: "Rename folder" }).click();
    await manage.getByLabel("New name for 2026").fill("Year 2026");
    await manage.getByRole("button", { name: "Rename", exact: true }).click();
    await notice.filter({ hasText: "2026 renamed to Year 2026" }).waitFor({ timeout: 30_000 });
    await manage.getByRole("button", { name: "Move folder" }).click();
    await manage.getByLabel("Move Year 2026 into").selectOption({ label: "Harbour works (top level)" });
    await manage.getByRole("button", { name: "Move", exact: true }).click();
    await notice.filter({ hasText: "Year 2026 moved to Harbour works (top level)" }).waitFor({ timeout: 30_000 });
    const top = (await tenant.api.get(`/folders?project_id=${project.id}`)).body.items.map((f: { name: string }) => f.name).sort();
    expect(top).toEqual(["Invoices", "Year 2026"]);
    await page.screenshot({ path: join(SHOTS, "places-manage-1366.png") });

    // A project holding folders cannot be deleted: the server's reason is shown.
    page.on("dialog", (dialog) => dialog.accept());
    await places.getByRole("button", { name: "Harbour works" }).click();
    await manage.getByRole("button", { name: "Delete project" }).click();
    await expect(manage.getByRole("alert").textContent({ timeout: 30_000 })).resolves.toMatch(/folders|not empty/i);
    for (const name of ["Year 2026", "Invoices"]) {
      await places.getByRole("button", { name, exact: true }).click();
      await manage.getByRole("button", { name: "Delete folder" }).click();
      await notice.filter({ hasText: `${name} deleted` }).waitFor({ timeout: 30_000 });
    }
    await places.getByRole("button", { name: "Harbour works" }).click();
    await manage.getByRole("button", { name: "Delete project" }).click();
    await notice.filter({ hasText: "Harbour works deleted" }).waitFor({ timeout: 30_000 });
    expect((await tenant.api.get("/projects?limit=100")).body.items.map((p: { name: string }) => p.name)).toEqual(["Default"]);
    // The refusal above was the one expected 409; nothing else failed.
    expect(failures.failed().filter((f) => !/^409 DELETE .*\/projects\//.test(f))).toEqual([]);
  } finally {
    await page.close();
  }
}, 180_000);

test("a viewer sees the places but no way to change them", async () => {
  const tenant = await server.tenant({ tier: "CUSTOM" });
  const viewer = await tenant.keyWith(["view"]);
  const page = await newPage(browser, WIDTHS.laptop, 900);
  try {
    await signIn(page, server.url, viewer.key!);
    await page.getByRole("navigation", { name: "Projects and folders" }).getByRole("button", { name: "Default" }).waitFor({ timeout: 30_000 });
    // A key's permissions are not known to the page: the buttons show, and the server refuses.
    await page.getByRole("group", { name: "Manage projects and folders" }).getByRole("button", { name: "New project" }).click();
    await page.getByLabel("New project's name").fill("Not allowed");
    await page.getByRole("button", { name: "Create" }).click();
    await expect(page.getByRole("alert").textContent({ timeout: 30_000 })).resolves.toContain("EDIT");
  } finally {
    await page.close();
  }
}, 120_000);
