/** Real images made for the tests with sharp: synthetic photos, rendered text and EXIF variants. */
import sharp from "sharp";

/** A "photo": a gradient sky, a sun and hills whose colours and layout depend on the seed. */
export async function photo(seed: number, width = 1600, height = 1200, format: "jpeg" | "png" | "webp" = "jpeg"): Promise<Buffer> {
  const hue = (seed * 67) % 360;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="${seed % 2}" y2="1">
      <stop offset="0" stop-color="hsl(${hue},70%,60%)"/><stop offset="1" stop-color="hsl(${(hue + 120) % 360},60%,30%)"/>
    </linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <circle cx="${((seed * 37) % 80 + 10) * width / 100}" cy="${height * 0.3}" r="${height * (0.08 + (seed % 5) * 0.03)}" fill="hsl(${(hue + 200) % 360},90%,70%)"/>
    ${Array.from({ length: 3 + (seed % 4) }, (_, i) => `<ellipse cx="${(i * 0.3 + (seed % 3) * 0.1) * width}" cy="${height * (0.85 + (i % 2) * 0.05)}" rx="${width * 0.3}" ry="${height * 0.2}" fill="hsl(${(hue + 60 + i * 25) % 360},50%,${25 + i * 8}%)"/>`).join("")}
    ${Array.from({ length: 6 }, (_, i) => `<rect x="${((seed * 13 + i * 17) % 90) * width / 100}" y="${((seed * 7 + i * 29) % 60) * height / 100}" width="${width / 12}" height="${height / 10}" fill="hsl(${(hue + i * 50) % 360},80%,50%)" transform="rotate(${(seed * 11 + i * 23) % 90} ${width / 2} ${height / 2})"/>`).join("")}
  </svg>`;
  return sharp(Buffer.from(svg)).toFormat(format, format === "jpeg" ? { quality: 90 } : {}).toBuffer();
}

/** Black text lines on white, at known positions (top-left x = 60, one line every 110 px from y = 60). */
export async function textImage(lines: string[], width = 1400, height = 120 + lines.length * 110): Promise<Buffer> {
  const escape = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="white"/>
    ${lines.map((line, i) => `<text x="60" y="${110 + i * 110}" font-family="DejaVu Sans" font-size="56" fill="black">${escape(line)}</text>`).join("")}
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A plain image of one colour. */
export function solid(width: number, height: number, rgb: [number, number, number], format: "png" | "jpeg" = "png"): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } }).toFormat(format).toBuffer();
}

/**
 * A JPEG stored sideways (landscape pixels) with EXIF orientation 6, so viewers show it upright
 * as portrait, and with a capture time in EXIF.
 */
export async function exifRotatedJpeg(storedWidth = 800, storedHeight = 400): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${storedWidth}" height="${storedHeight}">
    <rect width="50%" height="100%" fill="rgb(220,30,30)"/><rect x="50%" width="50%" height="100%" fill="rgb(30,30,220)"/></svg>`;
  return sharp(Buffer.from(svg))
    .jpeg({ quality: 90 })
    .withMetadata({ orientation: 6 })
    .withExifMerge({ IFD0: { Make: "Mediabox Test" }, IFD2: { DateTimeOriginal: "2021:06:01 12:34:56", OffsetTimeOriginal: "+02:00" } } as never)
    .toBuffer();
}

/** Bytes that look like a PNG by magic number but decode to nothing. */
export function corruptPng(): Uint8Array {
  const bytes = new Uint8Array(4096);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  for (let i = 16; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
  return bytes;
}
