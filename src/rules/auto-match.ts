/**
 * Auto matching, as Paperless-ngx's "auto" algorithm: each organization has a text classifier
 * (text-classifier.ts) that learns every tag and folder from the files already carrying it, and
 * rules ask it through the `predicted_tags` and `predicted_folder_id` conditions. The only writer
 * of `auto_match_models` and `auto_match_labels`.
 *
 * The model is trained by a `rules.learn` job: when a rule naming a predicted field is saved, when
 * an apply-to-library job of such a rule starts on a library that changed, on demand, and, once
 * the library changed (a file added, tagged, moved: libraryFingerprint), at most every
 * MEDIABOX_AUTO_MATCH_RETRAIN_SECONDS after a file whose analysis ended met such a rule. A
 * file meets the model as it was last trained.
 *
 * On the data-access port: the library read a page at a time, the model stored in one
 * transaction, read through the caller's client or transaction.
 */
import { isoAt, type Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { FileRepository } from "../files/file-repository.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { JobRunner } from "../jobs/runner.ts";
import { usesPredictions, type Condition } from "./conditions.ts";
import { featureTextOf, type TextSource } from "./file-text.ts";
import { DEFAULT_MIN_EXAMPLES, scoreText, termIndex, trainClassifier, type Classifier, type LabelledText } from "./text-classifier.ts";

export type LabelKind = "tag" | "folder";

/** At most this many tags are learned (the most used); every folder with enough files is. */
const MAX_TAG_LABELS = 200;
const MAX_FOLDER_LABELS = 200;

export interface AutoMatchDeps {
  sql: SqlClient;
  /** The files' texts (FileRepository.extractedText). */
  files: FileRepository;
  clock: Clock;
  config: Config;
  jobs: JobRunner;
}

/** A file's predictions: each learned tag (lower case) and folder id with its score (0-1). */
export interface Predictions {
  tags: Map<string, number>;
  folders: Map<string, number>;
}

const SETTLED = "deleted_at IS NULL AND processing_status IN ('completed','stored','failed')";
const labelKey = (kind: LabelKind, label: string) => `${kind}:${label}`;

/** Changes whenever what the model learns from changes: a settled file added or removed, a tag or a folder changed. */
export async function libraryFingerprint(sql: SqlClient, orgId: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  let n = 0;
  for (let after = ""; ; ) {
    const page = await sql.all<{ id: string; tags: string | null; folder_id: string | null }>(
      `SELECT id, tags, folder_id FROM files WHERE org_id = ? AND id > ? AND ${SETTLED} ORDER BY id LIMIT ${FINGERPRINT_PAGE}`,
      [orgId, after],
    );
    for (const row of page) hash.update(`${row.id}\u0000${row.tags ?? ""}\u0000${row.folder_id ?? ""}\n`);
    n += page.length;
    if (page.length < FINGERPRINT_PAGE) break;
    after = page[page.length - 1]!.id;
  }
  return `${n}:${hash.digest("hex").slice(0, 32)}`;
}

/** Rows of the files read per statement while fingerprinting the library (three short columns each). */
const FINGERPRINT_PAGE = 5000;

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The settled files with text, each with its tags and folder as labels. */
async function trainingTexts(sql: SqlClient, files: TextSource, orgId: string): Promise<LabelledText[]> {
  const out: LabelledText[] = [];
  for (let after = ""; ; ) {
    const page = await sql.all<FileRow>(`SELECT * FROM files WHERE org_id = ? AND id > ? AND ${SETTLED} ORDER BY id LIMIT 200`, [orgId, after]);
    if (!page.length) break;
    for (const file of page) {
      const text = await featureTextOf(files, file);
      if (!text.trim()) continue;
      const labels = [...new Set(tagsOf(file).map((t) => labelKey("tag", t.toLowerCase())))];
      if (file.folder_id) labels.push(labelKey("folder", file.folder_id));
      out.push({ text, labels });
    }
    after = page[page.length - 1]!.id;
    await pause();
  }
  return out;
}

/** The labels worth learning: the most used tags and folders, each carried by at least the minimum. */
function labelsToLearn(texts: LabelledText[]): Set<string> {
  const carried = new Map<string, number>();
  for (const t of texts) for (const l of t.labels) carried.set(l, (carried.get(l) ?? 0) + 1);
  const top = (kind: LabelKind, max: number) =>
    [...carried]
      .filter(([l, n]) => l.startsWith(`${kind}:`) && n >= DEFAULT_MIN_EXAMPLES)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, max)
      .map(([l]) => l);
  return new Set([...top("tag", MAX_TAG_LABELS), ...top("folder", MAX_FOLDER_LABELS)]);
}

/** Trains the organization's classifier on its library as it is now and stores it (replacing the last). */
export async function trainOrganization(deps: Pick<AutoMatchDeps, "sql" | "files" | "clock">, orgId: string): Promise<AutoMatchStatus> {
  const { sql } = deps;
  const fingerprint = await libraryFingerprint(sql, orgId);
  const texts = await trainingTexts(sql, deps.files, orgId);
  const wanted = labelsToLearn(texts);
  const classifier = await trainClassifier(texts, { only: (l) => wanted.has(l), pause });
  const at = isoAt(deps.clock.now());
  await sql.transaction(async (tx) => {
    await tx.run("DELETE FROM auto_match_labels WHERE org_id = ?", [orgId]);
    await tx.run(
      `INSERT INTO auto_match_models (org_id, trained_at, fingerprint, example_files, terms, idf) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (org_id) DO UPDATE SET trained_at = excluded.trained_at, fingerprint = excluded.fingerprint, example_files = excluded.example_files, terms = excluded.terms, idf = excluded.idf`,
      [orgId, at, fingerprint, texts.length, JSON.stringify(classifier.vocabulary.terms), bytes(classifier.vocabulary.idf)],
    );
    for (const m of classifier.labels) {
      const [kind, ...rest] = m.label.split(":");
      await tx.run("INSERT INTO auto_match_labels (org_id, kind, label, positives, weights, bias) VALUES (?, ?, ?, ?, ?, ?)", [orgId, kind!, rest.join(":"), m.positives, bytes(m.weights), m.bias]);
    }
  });
  return autoMatchStatus(sql, orgId);
}

const bytes = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const floats = (b: Uint8Array) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

interface Loaded {
  /** What tells this model from another (of another training, or of another database in one process). */
  version: string;
  classifier: Classifier;
  index: Map<string, number>;
}

/**
 * Models read from the database, per organization, until a newer one is trained. A process
 * serves one database; the version (when it was trained and the fingerprint of the library it
 * learned, whose file ids are random) also tells apart same-named organizations of two databases
 * opened by one process, as the tests do.
 */
const loaded = new Map<string, Loaded>();

async function modelOf(sql: SqlClient, orgId: string): Promise<Loaded | null> {
  const head = await sql.one<{ trained_at: string; fingerprint: string }>("SELECT trained_at, fingerprint FROM auto_match_models WHERE org_id = ?", [orgId]);
  if (!head) return null;
  const version = `${head.trained_at} ${head.fingerprint}`;
  const hit = loaded.get(orgId);
  if (hit?.version === version) return hit;
  const row = await sql.one<{ trained_at: string; fingerprint: string; terms: string; idf: Uint8Array }>("SELECT trained_at, fingerprint, terms, idf FROM auto_match_models WHERE org_id = ?", [orgId]);
  if (!row) return null;
  const labels = (await sql.all<{ kind: string; label: string; positives: number; weights: Uint8Array; bias: number }>("SELECT kind, label, positives, weights, bias FROM auto_match_labels WHERE org_id = ?", [orgId]))
    .map((l) => ({ label: labelKey(l.kind as LabelKind, l.label), positives: l.positives, weights: floats(l.weights), bias: l.bias }));
  const classifier: Classifier = { vocabulary: { terms: JSON.parse(row.terms) as string[], idf: floats(row.idf) }, labels };
  const entry = { version: `${row.trained_at} ${row.fingerprint}`, classifier, index: termIndex(classifier.vocabulary) };
  loaded.set(orgId, entry);
  return entry;
}

/** The file's predicted tags and folders; null when the organization has no model yet or the file has no text. `files` reads the text (over the same client or transaction as `sql`). */
export async function predictionsFor(sql: SqlClient, files: TextSource, file: FileRow): Promise<Predictions | null> {
  const model = await modelOf(sql, file.org_id);
  if (!model || !model.classifier.labels.length) return null;
  const text = await featureTextOf(files, file);
  if (!text.trim()) return null;
  const out: Predictions = { tags: new Map(), folders: new Map() };
  for (const [key, score] of scoreText(model.classifier, text, model.index)) {
    const [kind, ...rest] = key.split(":");
    (kind === "tag" ? out.tags : out.folders).set(rest.join(":"), score);
  }
  return out;
}

export interface AutoMatchStatus {
  trained_at: string | null;
  /** Files with text the model learned from. */
  example_files: number;
  /** The library changed since (a retraining is due). */
  stale: boolean;
  labels: { kind: LabelKind; label: string; examples: number }[];
}

export async function autoMatchStatus(sql: SqlClient, orgId: string): Promise<AutoMatchStatus> {
  const model = await sql.one<{ trained_at: string; fingerprint: string; example_files: number }>("SELECT trained_at, fingerprint, example_files FROM auto_match_models WHERE org_id = ?", [orgId]);
  const labels = await sql.all<{ kind: LabelKind; label: string; examples: number }>(
    "SELECT kind, label, positives AS examples FROM auto_match_labels WHERE org_id = ? ORDER BY kind DESC, positives DESC, label",
    [orgId],
  );
  return { trained_at: model?.trained_at ?? null, example_files: model?.example_files ?? 0, stale: !model || model.fingerprint !== (await libraryFingerprint(sql, orgId)), labels };
}

/** Whether the model is missing or older than the library. */
export async function modelStale(sql: SqlClient, orgId: string): Promise<boolean> {
  const model = await sql.one<{ fingerprint: string }>("SELECT fingerprint FROM auto_match_models WHERE org_id = ?", [orgId]);
  return !model || model.fingerprint !== (await libraryFingerprint(sql, orgId));
}

/**
 * Queues a training when conditions ask the model and it is missing or older than the library.
 * Throttled, the library is not compared here (a scan of its files, after every file analysed):
 * the job compares it once when it runs, and trains only if it changed.
 */
export async function learnIfStale(deps: Pick<AutoMatchDeps, "sql" | "clock" | "config" | "jobs">, orgId: string, conditions: readonly Condition[], when: "now" | "throttled"): Promise<void> {
  if (!usesPredictions(conditions)) return;
  if (when === "throttled" || (await modelStale(deps.sql, orgId))) await requestTraining(deps, orgId, when);
}

/**
 * Queues a training of the organization's model (one at a time: asking while one waits returns
 * it). `soon` trains now; otherwise no sooner than MEDIABOX_AUTO_MATCH_RETRAIN_SECONDS after the
 * last training, so a library taking in a thousand files is learned again once, not a thousand times.
 */
export async function requestTraining(deps: Pick<AutoMatchDeps, "sql" | "clock" | "config" | "jobs">, orgId: string, when: "now" | "throttled"): Promise<{ id: string; deduplicated: boolean }> {
  const last = await deps.sql.one<{ trained_at: string }>("SELECT trained_at FROM auto_match_models WHERE org_id = ?", [orgId]);
  const earliest = last && when === "throttled" ? Date.parse(last.trained_at) + deps.config.autoMatchRetrainSeconds * 1000 : 0;
  const runAt = Math.max(deps.clock.now(), earliest);
  return deps.jobs.submit({ queue: "rules.learn", orgId, payload: { orgId, onlyIfChanged: when === "throttled" }, dedupeKey: `rules.learn:${orgId}:${when}`, runAt });
}
