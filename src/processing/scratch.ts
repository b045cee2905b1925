/**
 * Scratch space of the media pipelines (files written only to be moved into the blob store).
 * Nothing in it outlives the process that wrote it, so it is emptied at every start.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";

export const scratchRoot = (dataDir: string) => join(dataDir, "tmp");

export function clearScratch(dataDir: string): void {
  rmSync(scratchRoot(dataDir), { recursive: true, force: true });
}
