import { expect, test } from "bun:test";
import sharp from "sharp";
import { frameSignature, isBlank, looksAlike, readingPlan } from "../src/video/frame-likeness.ts";

/** A 1280×720 frame: a street-like gradient with a title, and optionally a subtitle line. */
async function frame(subtitle: string | null, quality = 85): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1280" height="720">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#35506b"/><stop offset="1" stop-color="#c9b48a"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/><circle cx="900" cy="260" r="140" fill="#e8d9a0"/>
    <text x="80" y="160" font-family="DejaVu Sans" font-size="72" fill="white">HARBOUR NEWS</text>
    ${subtitle ? `<text x="200" y="660" font-family="DejaVu Sans" font-size="28" fill="white">${subtitle}</text>` : ""}</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality }).toBuffer();
}

test("the same picture looks alike; a changed digit or a new subtitle line does not", async () => {
  const base = await frameSignature(await frame("The quay wall was built in 1911"));
  expect(looksAlike(base, await frameSignature(await frame("The quay wall was built in 1911")))).toBe(true);
  // One changed digit is a new reading.
  expect(looksAlike(base, await frameSignature(await frame("The quay wall was built in 1912")))).toBe(false);
  expect(looksAlike(base, await frameSignature(await frame("Repairs begin this winter")))).toBe(false);
  expect(looksAlike(base, await frameSignature(await frame(null)))).toBe(false);
});

test("a uniform card is blank; a picture with text is not", async () => {
  const card = await sharp({ create: { width: 640, height: 360, channels: 3, background: "#202020" } }).jpeg().toBuffer();
  expect(isBlank(await frameSignature(card))).toBe(true);
  expect(isBlank(await frameSignature(await frame("Subtitle")))).toBe(false);
});

test("the reading plan reads the first of each run of look-alike frames and never a blank one", async () => {
  const card = await sharp({ create: { width: 1280, height: 720, channels: 3, background: "#000000" } }).jpeg().toBuffer();
  const frames = await Promise.all(
    [frame("First line"), frame("First line"), Promise.resolve(card), frame("First line"), frame("Second line"), frame("Second line")].map(async (f) => frameSignature(await f)),
  );
  expect(readingPlan(frames)).toEqual([
    { kind: "read" },
    { kind: "same-as", frame: 0 },
    { kind: "blank" },
    // A blank frame between two alike ones does not force a second reading.
    { kind: "same-as", frame: 0 },
    { kind: "read" },
    { kind: "same-as", frame: 4 },
  ]);
});
