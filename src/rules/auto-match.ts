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
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { JobRunner } from "../jobs/runner.ts";
import { usesPredictions, type Condition } from "./conditions.ts";
import { featureTextOf } from "./file-text.ts";
import { DEFAULT_MIN_EXAMPLES, scoreText, termIndex, trainClassifier, type Classifier, type LabelledText } from "./text-classifier.ts";

export type LabelKind = "tag" | "folder";

/** At most this many tags are learned (the most used); every folder with enough files is. */
const MAX_TAG_LABELS = 200;
const MAX_FOLDER_LABELS = 200;

export interface AutoMatchDeps {
  db: Database;
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
export function libraryFingerprint(db: Database, orgId: string): string {
  const hash = new Bun.CryptoHasher("sha256");
  const rows = db.query<{ id: string; tags: string | null; folder_id: string | null }, [string]>(`SELECT id, tags, folder_id FROM files WHERE org_id = ? AND ${SETTLED} ORDER BY id`);
  let n = 0;
  for (const row of rows.iterate(orgId)) {
    hash.update(`${row.id}\u0000${row.tags ?? ""}\u0000${row.folder_id ?? ""}\n`);
    n += 1;
  }
  return `${n}:${hash.digest("hex").slice(0, 32)}`;
}

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The settled files with text, each with its tags and folder as labels. */
async function trainingTexts(db: Database, orgId: string): Promise<LabelledText[]> {
  const out: LabelledText[] = [];
  for (let after = ""; ; ) {
    const page = db.query<FileRow, [string, string]>(`SELECT * FROM files WHERE org_id = ? AND id > ? AND ${SETTLED} ORDER BY id LIMIT 200`).all(orgId, after);
    if (!page.length) break;
    for (const file of page) {
      const text = featureTextOf(db, file);
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
export async function trainOrganization(deps: Pick<AutoMatchDeps, "db" | "clock">, orgId: string): Promise<AutoMatchStatus> {
  const { db } = deps;
  const fingerprint = libraryFingerprint(db, orgId);
  const texts = await trainingTexts(db, orgId);
  const wanted = labelsToLearn(texts);
  const classifier = await trainClassifier(texts, { only: (l) => wanted.has(l), pause });
  const at = isoAt(deps.clock.now());
  db.transaction(() => {
    db.query("DELETE FROM auto_match_labels WHERE org_id = ?").run(orgId);
    db.query(
      `INSERT INTO auto_match_models (org_id, trained_at, fingerprint, example_files, terms, idf) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (org_id) DO UPDATE SET trained_at = excluded.trained_at, fingerprint = excluded.fingerprint, example_files = excluded.example_files, terms = excluded.terms, idf = excluded.idf`,
    ).run(orgId, at, fingerprint, texts.length, JSON.stringify(classifier.vocabulary.terms), bytes(classifier.vocabulary.idf));
    const insert = db.query("INSERT INTO auto_match_labels (org_id, kind, label, positives, weights, bias) VALUES (?, ?, ?, ?, ?, ?)");
    for (const m of classifier.labels) {
      const [kind, ...rest] = m.label.split(":");
      insert.run(orgId, kind!, rest.join(":"), m.positives, bytes(m.weights), m.bias);
    }
  })();
  return autoMatchStatus(db, orgId);
}

const bytes = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const floats = (b: Uint8Array) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

interface Loaded {
  trainedAt: string;
  classifier: Classifier;
  index: Map<string, number>;
}

/** Models read from the database, per database and organization, until a newer one is trained. */
const loaded = new WeakMap<Database, Map<string, Loaded>>();

function modelOf(db: Database, orgId: string): Loaded | null {
  const head = db.query<{ trained_at: string }, [string]>("SELECT trained_at FROM auto_match_models WHERE org_id = ?").get(orgId);
  if (!head) return null;
  let cache = loaded.get(db);
  if (!cache) loaded.set(db, (cache = new Map()));
  const hit = cache.get(orgId);
  if (hit?.trainedAt === head.trained_at) return hit;
  const row = db.query<{ trained_at: string; terms: string; idf: Uint8Array }, [string]>("SELECT trained_at, terms, idf FROM auto_match_models WHERE org_id = ?").get(orgId)!;
  const labels = db
    .query<{ kind: string; label: string; positives: number; weights: Uint8Array; bias: number }, [string]>("SELECT kind, label, positives, weights, bias FROM auto_match_labels WHERE org_id = ?")
    .all(orgId)
    .map((l) => ({ label: labelKey(l.kind as LabelKind, l.label), positives: l.positives, weights: floats(l.weights), bias: l.bias }));
  const classifier: Classifier = { vocabulary: { terms: JSON.parse(row.terms) as string[], idf: floats(row.idf) }, labels };
  const entry = { trainedAt: row.trained_at, classifier, index: termIndex(classifier.vocabulary) };
  cache.set(orgId, entry);
  return entry;
}

/** The file's predicted tags and folders; null when the organization has no model yet or the file has no text. */
export function predictionsFor(db: Database, file: FileRow): Predictions | null {
  const model = modelOf(db, file.org_id);
  if (!model || !model.classifier.labels.length) return null;
  const text = featureTextOf(db, file);
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

export function autoMatchStatus(db: Database, orgId: string): AutoMatchStatus {
  const model = db.query<{ trained_at: string; fingerprint: string; example_files: number }, [string]>("SELECT trained_at, fingerprint, example_files FROM auto_match_models WHERE org_id = ?").get(orgId);
  const labels = db
    .query<{ kind: LabelKind; label: string; examples: number }, [string]>("SELECT kind, label, positives AS examples FROM auto_match_labels WHERE org_id = ? ORDER BY kind DESC, positives DESC, label")
    .all(orgId);
  return { trained_at: model?.trained_at ?? null, example_files: model?.example_files ?? 0, stale: !model || model.fingerprint !== libraryFingerprint(db, orgId), labels };
}

/** Whether the model is missing or older than the library. */
export function modelStale(db: Database, orgId: string): boolean {
  const model = db.query<{ fingerprint: string }, [string]>("SELECT fingerprint FROM auto_match_models WHERE org_id = ?").get(orgId);
  return !model || model.fingerprint !== libraryFingerprint(db, orgId);
}

/**
 * Queues a training when conditions ask the model and it is missing or older than the library.
 * Throttled, the library is not compared here (a scan of its files, after every file analysed):
 * the job compares it once when it runs, and trains only if it changed.
 */
export function learnIfStale(deps: Pick<AutoMatchDeps, "db" | "clock" | "config" | "jobs">, orgId: string, conditions: readonly Condition[], when: "now" | "throttled"): void {
  if (!usesPredictions(conditions)) return;
  if (when === "throttled" || modelStale(deps.db, orgId)) requestTraining(deps, orgId, when);
}

/**
 * Queues a training of the organization's model (one at a time: asking while one waits returns
 * it). `soon` trains now; otherwise no sooner than MEDIABOX_AUTO_MATCH_RETRAIN_SECONDS after the
 * last training, so a library taking in a thousand files is learned again once, not a thousand times.
 */
export function requestTraining(deps: Pick<AutoMatchDeps, "db" | "clock" | "config" | "jobs">, orgId: string, when: "now" | "throttled"): { id: string; deduplicated: boolean } {
  const last = deps.db.query<{ trained_at: string }, [string]>("SELECT trained_at FROM auto_match_models WHERE org_id = ?").get(orgId);
  const earliest = last && when === "throttled" ? Date.parse(last.trained_at) + deps.config.autoMatchRetrainSeconds * 1000 : 0;
  const runAt = Math.max(deps.clock.now(), earliest);
  return deps.jobs.enqueue({ queue: "rules.learn", orgId, payload: { orgId, onlyIfChanged: when === "throttled" }, dedupeKey: `rules.learn:${orgId}:${when}`, runAt });
}
