/**
 * What a release binary is made of, by part: scripts/build.ts records every file it embeds under
 * one of these parts, and the rest of the executable is the runtime (Bun itself, the bundled
 * server code and the dashboard). The build prints the table and writes it beside the binary
 * (`dist/mediabox.parts.json`) for bench:binary.
 */
import { statSync } from "node:fs";

export const BINARY_PARTS = ["runtime", "native modules", "models", "ffmpeg", "media assets"] as const;
export type BinaryPart = (typeof BINARY_PARTS)[number];

export interface PartSizes {
  /** Size of the executable in bytes. */
  total: number;
  /** Bytes per part; they add up to `total`. */
  parts: Record<BinaryPart, number>;
}

/**
 * The part a file of the embedded assets tree belongs to, from its path in the tree
 * ("/"-separated, layout: stageAssets in scripts/build.ts): trained weights, vocabularies and
 * language data are models; the code and wasm that run them, fonts and word lists are media assets.
 */
export function assetTreePart(path: string): "models" | "media assets" {
  const modelFolders = ["models/", "tesseract/eng/", "vision/human-models/", "vision/mobilenet_v2/", "text/use-lite/"];
  return modelFolders.some((folder) => path.startsWith(folder)) ? "models" : "media assets";
}

export class EmbeddedParts {
  private readonly bytes = new Map<BinaryPart, number>();

  /** Counts a file the build embeds; returns the path, so it can wrap an import specifier. */
  add(part: Exclude<BinaryPart, "runtime">, path: string): string {
    this.bytes.set(part, (this.bytes.get(part) ?? 0) + statSync(path).size);
    return path;
  }

  /** The executable's parts; the runtime is what the embedded files do not account for. */
  sizes(executable: string): PartSizes {
    const total = statSync(executable).size;
    const embedded = [...this.bytes.values()].reduce((a, b) => a + b, 0);
    const parts = Object.fromEntries(BINARY_PARTS.map((p) => [p, this.bytes.get(p) ?? 0])) as Record<BinaryPart, number>;
    parts.runtime = total - embedded;
    return { total, parts };
  }
}

const mb = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MB`;

/** The table the build prints: one line per part, then the total. */
export function formatPartSizes(sizes: PartSizes): string {
  const lines = BINARY_PARTS.map((p) => `  ${p.padEnd(15)}${mb(sizes.parts[p]).padStart(10)}`);
  return [...lines, `  ${"total".padEnd(15)}${mb(sizes.total).padStart(10)}`].join("\n");
}
