/**
 * Development convenience: links model folders from ../shared/models (present on the team's
 * build machines) into models/ when they are not there yet. Never copies weights into the
 * repository; models/ is git-ignored. On other machines it does nothing.
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const shared = resolve(root, "..", "shared", "models");
const target = resolve(process.env.MEDIABOX_MODELS_DIR ?? join(root, "models"));
if (existsSync(shared)) {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(shared, { withFileTypes: true })) {
    if (!entry.isDirectory() || existsSync(join(target, entry.name))) continue;
    symlinkSync(join(shared, entry.name), join(target, entry.name), "dir");
    console.log(`linked model folder ${entry.name} from ${shared}`);
  }
}
