/**
 * The lifetime of the pipelines' scratch space (DataDir's `scratch`: temporary files of OCR, the
 * document reader and intent checks). Nothing in it outlives the process that wrote it, so it is
 * emptied at every start.
 */
import { rmSync } from "node:fs";
import type { DataDir } from "../storage/data-dir.ts";

export function clearScratch(dataDir: DataDir): void {
  rmSync(dataDir.scratch, { recursive: true, force: true });
}
