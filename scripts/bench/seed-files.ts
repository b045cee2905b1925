/**
 * Synthetic libraries for the benchmarks: file rows with varied titles, tags, descriptions, text
 * and media types (no blobs), written straight into a stopped server's database.
 */
import { openDatabase } from "../../src/db/database.ts";

const WORDS = "harbor crane invoice sunset orchard quarry drawing survey bridge tunnel pump valve turbine roof facade kitchen garden river forest mountain".split(" ");
const TAGS = ["site-a", "site-b", "site-c", "urgent", "archive", "review", "final", "draft", "north", "south"];

/** Inserts `count` synthetic file rows (metadata only, no blobs) into the organization's default project. */
export function seedFiles(databasePath: string, orgId: string, count: number): void {
  const db = openDatabase(databasePath);
  const projectId = (db.query("SELECT id FROM projects WHERE org_id = ? AND is_default = 1").get(orgId) as { id: string }).id;
  const insert = db.query(
    `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, title, tags, size_bytes,
       content_type, upload_description, visible_text, processing_status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'stored')`,
  );
  let x = 12345;
  const rand = (n: number) => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 16) % n; // the low bits of an LCG cycle quickly
  };
  const started = Date.parse("2024-01-01T00:00:00Z");
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const words = Array.from({ length: 4 }, () => WORDS[rand(WORDS.length)]!);
      const tags = [...new Set(Array.from({ length: 1 + rand(3) }, () => TAGS[rand(TAGS.length)]!))];
      if (i % 1000 === 0) tags.push("rare");
      const at = new Date(started + i * 60_000).toISOString();
      const media = ["image", "document", "video"][rand(3)]!;
      insert.run(
        crypto.randomUUID(), orgId, projectId, media, `file-${i}.${media === "image" ? "jpg" : media === "document" ? "pdf" : "mp4"}`,
        at, at, `${words[0]} ${words[1]} ${i}`, JSON.stringify(tags), 1000 + rand(10_000_000), "application/octet-stream",
        `A ${words[2]} near the ${words[3]}`, rand(4) === 0 ? `Reference REF-${i} ${words[1]}` : null,
      );
    }
  })();
  db.close();
}


/**
 * Inserts `count` photo rows (images, no blobs) taken over `months` months ending December 2024,
 * unevenly (some months hold several times as many as others, as a real library's do).
 */
export function seedPhotos(databasePath: string, orgId: string, count: number, months = 120): void {
  const db = openDatabase(databasePath);
  const projectId = (db.query("SELECT id FROM projects WHERE org_id = ? AND is_default = 1").get(orgId) as { id: string }).id;
  const insert = db.query(
    `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, content_created_at, title, tags, size_bytes,
       content_type, processing_status)
     VALUES (?, ?, ?, 'image', ?, ?, ?, ?, NULL, '[]', ?, 'image/jpeg', 'stored')`,
  );
  let x = 54321;
  const rand = (n: number) => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 16) % n;
  };
  // Month weights 1-4, so months differ in size.
  const weights = Array.from({ length: months }, () => 1 + rand(4));
  const total = weights.reduce((a, b) => a + b, 0);
  const uploaded = new Date("2025-01-15T00:00:00Z").toISOString();
  db.transaction(() => {
    let made = 0;
    weights.forEach((weight, m) => {
      const n = m === months - 1 ? count - made : Math.round((count * weight) / total);
      const year = 2024 - Math.floor(m / 12);
      const month = 11 - (m % 12);
      for (let i = 0; i < n; i++) {
        const taken = new Date(Date.UTC(year, month, 1 + rand(28), rand(24), rand(60))).toISOString();
        insert.run(crypto.randomUUID(), orgId, projectId, `IMG_${made + i}.jpg`, uploaded, uploaded, taken, 500_000 + rand(5_000_000));
      }
      made += n;
    });
  })();
  db.close();
}
