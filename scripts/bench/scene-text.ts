/**
 * A small generated set of photos with scene text (bench:ocr's "scene words"): storefront signs
 * ("OPEN DAILY", "CAFE", ...) painted at an angle on busy photo-like backgrounds (brick-like
 * blocks, gradients, noise), then blurred and saved as JPEG like a phone photo. No public photo
 * set with scene text is at hand; this one is deterministic (a seeded generator), so the halves
 * and figures are stable from run to run. The truth lists each sign's words top-down.
 */
import sharp from "sharp";
import { seededRandom } from "./seeded-random.ts";

const SIGNS = [
  "OPEN DAILY", "CAFE", "FRESH BREAD", "PHARMACY", "SALE 50% OFF", "HAIR SALON", "BOOKS & MORE", "PIZZA",
  "FLOWERS", "NO PARKING", "HOTEL", "MARKET", "OPEN 24 HOURS", "COFFEE TO GO", "BAKERY", "Fish & Chips",
  "Gelato", "Open Mon-Sat 9-18", "TAXI", "Laundry", "Bike Repair", "SUSHI BAR", "Tickets", "Welcome",
];
const FONTS = ["DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono", "DejaVu Sans Condensed"];
const COUNT = 16;
const WIDTH = 1024;
const HEIGHT = 768;


const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const colour = (r: () => number, lo: number, hi: number) => `rgb(${[0, 1, 2].map(() => Math.round(lo + r() * (hi - lo))).join(",")})`;

export async function sceneTextImages(): Promise<{ id: string; image: Buffer; truth: string }[]> {
  const items = [];
  for (let n = 0; n < COUNT; n++) {
    const r = seededRandom(1000 + n);
    const parts: string[] = [`<rect width="100%" height="100%" fill="${colour(r, 60, 200)}"/>`];
    // Brick-like blocks and window shapes: edges and texture a detector must not take for text.
    for (let i = 0; i < 60; i++) {
      parts.push(`<rect x="${r() * WIDTH}" y="${r() * HEIGHT}" width="${20 + r() * 140}" height="${10 + r() * 60}" fill="${colour(r, 30, 230)}" opacity="${0.3 + r() * 0.5}"/>`);
    }
    const signs = 1 + Math.floor(r() * 3);
    const band = HEIGHT / signs;
    const truth: string[] = [];
    for (let s = 0; s < signs; s++) {
      const text = SIGNS[Math.floor(r() * SIGNS.length)]!;
      const size = 36 + r() * 70;
      const width = Math.min(WIDTH - 80, text.length * size * 0.68 + 60);
      const height = size * 1.6;
      const x = 40 + r() * Math.max(1, WIDTH - 80 - width);
      const y = s * band + (band - height) / 2;
      const angle = (r() - 0.5) * 14;
      const dark = r() < 0.5;
      const board = dark ? colour(r, 10, 70) : colour(r, 190, 250);
      const ink = dark ? colour(r, 200, 255) : colour(r, 0, 90);
      const font = FONTS[Math.floor(r() * FONTS.length)]!;
      parts.push(
        `<g transform="rotate(${angle.toFixed(1)} ${x + width / 2} ${y + height / 2})">` +
          `<rect x="${x}" y="${y}" width="${width}" height="${height}" rx="8" fill="${board}"/>` +
          `<text x="${x + width / 2}" y="${y + height * 0.68}" font-family="${font}" font-weight="${r() < 0.5 ? "bold" : "normal"}" font-size="${size.toFixed(0)}" text-anchor="middle" fill="${ink}">${escape(text)}</text></g>`,
      );
      truth.push(text);
    }
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}">${parts.join("")}</svg>`;
    const noise = Buffer.from(Array.from({ length: WIDTH * HEIGHT }, () => Math.round(r() * 40)));
    const image = await sharp(Buffer.from(svg))
      .composite([{ input: await sharp(noise, { raw: { width: WIDTH, height: HEIGHT, channels: 1 } }).png().toBuffer(), blend: "overlay" }])
      .blur(0.8)
      .jpeg({ quality: 70 })
      .toBuffer();
    items.push({ id: `scene-${String(n).padStart(2, "0")}`, image, truth: truth.join("\n") });
  }
  return items;
}
