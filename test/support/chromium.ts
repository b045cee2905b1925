/**
 * Debian's chromium for dashboard tests, driven by playwright-core (no browser download): its
 * launch, signing in with an API key, and the checks every page view of the responsive dashboard
 * must pass: no request answered 4xx/5xx and no sideways scroll at the viewport's width.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "bun:test";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { freshIp } from "./server.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const SHOTS = join(import.meta.dir, "..", "..", "test-results", "dashboard");

/** The widths the dashboard is tested at: a phone, a tablet, a laptop and a desktop screen. */
export const WIDTHS = { phone: 390, tablet: 768, laptop: 1366, desktop: 1920 } as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A page of its own (a new context) at `width` x `height`, from a client address of its own: the
 * sign-in page's anonymous requests are limited to 5 a minute per address, which one file's pages
 * would otherwise share.
 */
export function newPage(browser: Browser, width: number, height: number, options: BrowserContextOptions = {}): Promise<Page> {
  return browser.newPage({ ...options, viewport: { width, height }, extraHTTPHeaders: { "x-forwarded-for": freshIp(), ...options.extraHTTPHeaders } });
}

/** Opens the dashboard at `url`, signs in through its API-key form and waits for the library to show. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("button", { name: "Use an API key instead" }).click();
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Library" }).waitFor({ timeout: 30_000 });
}

/** Records every response of the page that answered 4xx or 5xx (`failed()` lists them as "STATUS METHOD URL"), and the page's uncaught script errors. */
export function watchFailures(page: Page): { failed: () => string[]; ignore: (pattern: RegExp) => void } {
  const failures: string[] = [];
  const ignored: RegExp[] = [];
  page.on("response", (res) => {
    if (res.status() >= 400 && !ignored.some((p) => p.test(res.url()))) failures.push(`${res.status()} ${res.request().method()} ${res.url()}`);
  });
  page.on("pageerror", (err) => failures.push(`script error: ${err.message}`));
  return { failed: () => [...failures], ignore: (pattern) => ignored.push(pattern) };
}

/** The page does not scroll sideways: nothing is wider than the viewport. */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, innerWidth, widest } = await page.evaluate(() => {
    const viewport = window.innerWidth;
    // Names the widest element poking out, so a failure says what to fix.
    let widest = "";
    let right = viewport;
    const clipped = (el: HTMLElement) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return true;
      return false;
    };
    for (const el of document.querySelectorAll<HTMLElement>("body *")) {
      const r = el.getBoundingClientRect().right;
      if (r > right + 0.5 && clipped(el)) continue;
      if (r > right + 0.5) {
        right = r;
        const path = [el, el.parentElement, el.parentElement?.parentElement].filter(Boolean).map((e) => `${e!.tagName.toLowerCase()}${e!.className ? `.${String(e!.className).trim().replace(/\s+/g, ".")}` : ""}`);
        widest = `${path.reverse().join(" > ")} "${(el.textContent ?? "").trim().slice(0, 30)}" (right edge ${Math.round(r)} px)`;
      }
    }
    return { scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: viewport, widest };
  });
  expect({ scrollWidth: scrollWidth <= innerWidth, widest: scrollWidth <= innerWidth ? "" : widest }).toEqual({ scrollWidth: true, widest: "" });
}

/** Interactive targets at least this tall and wide (WCAG 2.5.8 asks 24 px; touch guidelines 44-48): links inside prose are exempt. */
export async function smallTargets(page: Page, minimum = 32): Promise<string[]> {
  return page.evaluate((min) => {
    const small: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>("button, a.button, select, input:not([type=checkbox]):not([type=radio]):not([type=hidden]), nav a, [role=tab]")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue; // not shown
      if (el.closest(".visually-hidden")) continue;
      if (r.height < min || r.width < min) small.push(`${el.tagName.toLowerCase()} "${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 40)}" ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
    return small;
  }, minimum);
}

/** Follows a link of the main navigation, opening the phone menu or the "More" list first when the link is folded there. */
export async function navigate(page: Page, name: string): Promise<void> {
  const nav = page.getByRole("navigation", { name: "Main" });
  const link = nav.getByRole("link", { name, exact: true });
  const menu = nav.getByRole("button", { name: "Menu" });
  if (!(await link.isVisible()) && (await menu.isVisible())) await menu.click();
  if (!(await link.isVisible())) await nav.getByRole("button", { name: "More" }).click();
  await link.click();
}

/** Signs out from the top bar, opening the account menu first when the button is folded there. */
export async function signOut(page: Page): Promise<void> {
  const button = page.getByRole("button", { name: "Sign out" });
  if (!(await button.isVisible())) {
    const menu = page.getByRole("button", { name: "Menu" });
    if (await menu.isVisible()) await menu.click();
  }
  if (!(await button.isVisible())) await page.getByRole("button", { name: /^Account: / }).click();
  await button.click();
}
