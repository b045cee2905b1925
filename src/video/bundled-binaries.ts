/**
 * Where the static ffmpeg and ffprobe that ship with Mediabox are: inside the
 * @ffmpeg-installer / @ffprobe-installer npm packages in development. The compiled binary
 * cannot resolve packages, so scripts/build.ts replaces this module there with one that embeds
 * both executables and writes them to the native cache on first use (a server that never sees
 * a video never unpacks them), off the event loop through unpackBundledBinaries().
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const PACKAGES = { ffmpeg: "@ffmpeg-installer/linux-x64", ffprobe: "@ffprobe-installer/linux-x64" } as const;

/** The shipped executable, or null when its package is not installed. */
export function bundledBinary(tool: "ffmpeg" | "ffprobe"): string | null {
  try {
    return join(dirname(createRequire(import.meta.url).resolve(`${PACKAGES[tool]}/package.json`)), tool);
  } catch {
    return null;
  }
}

/** Writes the shipped executables where bundledBinary() finds them; nothing to do in development. */
export async function unpackBundledBinaries(): Promise<void> {}

/** Where the shipped executables come from, for error messages. */
export const bundledSource = (tool: "ffmpeg" | "ffprobe") => `the npm package ${PACKAGES[tool]}`;
