/**
 * Near-duplicates in the database: an image's fingerprint is stored when the pipeline has made
 * its variants, and compared then with every other image of its organization (64-bit hashes,
 * thumbnails only for the few close ones); the pairs found are kept (`similarity` holds the
 * thumbnails' correlation). Groups are the connected pairs among live files that nobody said are
 * not duplicates, computed when asked for. This module alone writes `image_fingerprints`,
 * `duplicate_pairs` and `duplicate_dismissals`, through the data-access port (SQLite or
 * PostgreSQL; docs/scale-out.md).
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { Fingerprint } from "./fingerprint.ts";
import { chooseBest, groupsOf, nearDuplicatePair, type Candidate } from "./near-duplicates.ts";

/** Stores the image's fingerprint and its near-duplicate pairs (replacing those of an earlier run). Returns how many pairs were found. */
export async function recordFingerprint(sql: SqlClient, file: { id: string; org_id: string }, print: Fingerprint): Promise<number> {
  const others = await sql.all<{ file_id: string; phash: string; phash_center: string | null; thumb: Uint8Array | null }>(
    `SELECT p.file_id, p.phash, p.phash_center, p.thumb FROM image_fingerprints p JOIN files f ON f.id = p.file_id
      WHERE p.org_id = ? AND p.file_id != ? AND f.deleted_at IS NULL`,
    [file.org_id, file.id],
  );
  const pairs = others.flatMap((o) => {
    // Fingerprints stored before the centre hash and thumbnail existed are compared by the whole hash.
    const other = { phash: o.phash, phashCenter: o.phash_center ?? o.phash, thumb: o.thumb ? new Uint8Array(o.thumb) : new Uint8Array(), sharpness: 0 };
    const verdict = nearDuplicatePair(print, other);
    return verdict.duplicate ? [{ id: o.file_id, ...verdict }] : [];
  });

  await sql.transaction(async (tx) => {
    await tx.run("DELETE FROM duplicate_pairs WHERE file_a = ? OR file_b = ?", [file.id, file.id]);
    await tx.run(
      `INSERT INTO image_fingerprints (file_id, org_id, phash, phash_center, thumb, sharpness) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (file_id) DO UPDATE SET org_id = excluded.org_id, phash = excluded.phash, phash_center = excluded.phash_center, thumb = excluded.thumb,
         sharpness = excluded.sharpness`,
      [file.id, file.org_id, print.phash, print.phashCenter, print.thumb, print.sharpness],
    );
    for (const pair of pairs) {
      const [a, b] = file.id < pair.id ? [file.id, pair.id] : [pair.id, file.id];
      await tx.run(
        `INSERT INTO duplicate_pairs (file_a, file_b, org_id, hamming, similarity) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (file_a, file_b) DO UPDATE SET org_id = excluded.org_id, hamming = excluded.hamming, similarity = excluded.similarity`,
        [a, b, file.org_id, pair.hamming, pair.correlation === null ? null : Math.round(pair.correlation * 10_000) / 10_000],
      );
    }
  });
  return pairs.length;
}

export interface DuplicateMember extends Candidate {
  filename: string;
  width: number | null;
  height: number | null;
  contentCreatedAt: string | null;
}

export interface DuplicateGroup {
  /** Stable while the members stay the same: the first 16 hex digits of the SHA-256 of the sorted member ids. */
  id: string;
  best: string;
  /** The best first, then by upload time. */
  members: DuplicateMember[];
}

interface MemberRow {
  id: string;
  filename: string;
  width: number | null;
  height: number | null;
  size_bytes: number;
  created_at: string;
  content_created_at: string | null;
  sharpness: number | null;
}

function groupId(ids: string[]): string {
  return new Bun.CryptoHasher("sha256").update(ids.join(",")).digest("hex").slice(0, 16);
}

/** A group before its members' rows are read: enough to order the groups and find a file's group. */
export interface GroupMembership {
  id: string;
  /** Member ids, sorted. */
  memberIds: string[];
}

/**
 * The groups of near-duplicate live images of the organization, the largest first (then the
 * newest upload), from the pairs alone: one indexed query that also reads each file's upload
 * time, then union-find. No member row is read, so ordering every group costs little; the
 * members of the groups shown are read by `withMembers`.
 */
export async function groupMemberships(sql: SqlClient, orgId: string): Promise<GroupMembership[]> {
  const uploaded = new Map<string, string>();
  const pairs = (
    await sql.all<{ file_a: string; file_b: string; a_created: string; b_created: string }>(
      `SELECT d.file_a, d.file_b, a.created_at AS a_created, b.created_at AS b_created
         FROM duplicate_pairs d JOIN files a ON a.id = d.file_a JOIN files b ON b.id = d.file_b
        WHERE d.org_id = ? AND a.deleted_at IS NULL AND b.deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM duplicate_dismissals x WHERE x.file_a = d.file_a AND x.file_b = d.file_b)`,
      [orgId],
    )
  ).map((p): [string, string] => {
      uploaded.set(p.file_a, p.a_created);
      uploaded.set(p.file_b, p.b_created);
      return [p.file_a, p.file_b];
    });
  const newest = new Map<string, string>();
  const groups = groupsOf(pairs).map((memberIds) => {
    const id = groupId(memberIds);
    newest.set(id, memberIds.reduce((max, m) => (uploaded.get(m)! > max ? uploaded.get(m)! : max), ""));
    return { id, memberIds };
  });
  return groups.sort((a, b) => b.memberIds.length - a.memberIds.length || newest.get(b.id)!.localeCompare(newest.get(a.id)!) || a.id.localeCompare(b.id));
}

/** The groups with their members' rows, the best of each named and first. */
export async function withMembers(sql: SqlClient, groups: GroupMembership[]): Promise<DuplicateGroup[]> {
  const ids = groups.flatMap((g) => g.memberIds);
  const rows = new Map<string, MemberRow>();
  if (ids.length) {
    const found = await sql.all<MemberRow>(
      `SELECT f.id, f.filename, f.width, f.height, f.size_bytes, f.created_at, f.content_created_at, p.sharpness
         FROM files f LEFT JOIN image_fingerprints p ON p.file_id = f.id WHERE f.id IN (${sql.dialect.jsonValues})`,
      [JSON.stringify(ids)],
    );
    for (const row of found) rows.set(row.id, row);
  }
  return groups.map(({ id, memberIds }) => {
    const members = memberIds
      .map((m) => rows.get(m)!)
      .map((row) => ({
        id: row.id,
        filename: row.filename,
        width: row.width,
        height: row.height,
        pixels: (row.width ?? 0) * (row.height ?? 0),
        sharpness: row.sharpness ?? 0,
        sizeBytes: row.size_bytes,
        createdAt: row.created_at,
        contentCreatedAt: row.content_created_at,
      }));
    const best = chooseBest(members).id;
    members.sort((a, b) => Number(b.id === best) - Number(a.id === best) || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { id, best, members };
  });
}

/**
 * Records that the files are not copies of one another: every pair among them leaves the groups
 * (for good: the verdict outlives reprocessing). Returns how many found pairs it took apart.
 */
export async function dismissDuplicates(sql: SqlClient, orgId: string, fileIds: string[], now: string): Promise<number> {
  const ids = [...new Set(fileIds)].sort();
  return sql.transaction(async (tx) => {
    let separated = 0;
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) {
        await tx.run("INSERT INTO duplicate_dismissals (file_a, file_b, org_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", [ids[i]!, ids[j]!, orgId, now]);
        separated += (await tx.one<{ n: number }>("SELECT count(*) AS n FROM duplicate_pairs WHERE file_a = ? AND file_b = ?", [ids[i]!, ids[j]!]))!.n;
      }
    }
    return separated;
  });
}

/**
 * Takes back "not duplicates" among the files: every pair among them may be grouped again.
 * Returns how many found pairs rejoin the groups.
 */
export async function undismissDuplicates(sql: SqlClient, orgId: string, fileIds: string[]): Promise<number> {
  const ids = [...new Set(fileIds)].sort();
  return sql.transaction(async (tx) => {
    let regrouped = 0;
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) {
        const removed = await tx.run("DELETE FROM duplicate_dismissals WHERE org_id = ? AND file_a = ? AND file_b = ?", [orgId, ids[i]!, ids[j]!]);
        if (removed.changes) regrouped += (await tx.one<{ n: number }>("SELECT count(*) AS n FROM duplicate_pairs WHERE file_a = ? AND file_b = ?", [ids[i]!, ids[j]!]))!.n;
      }
    }
    return regrouped;
  });
}
