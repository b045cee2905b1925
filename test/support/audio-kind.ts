/**
 * A media kind defined by a test, registered with `startTestServer({ kinds: [audioKind] })`: the
 * proof that a kind is added without touching any module of src/. WAV files (RIFF/WAVE, which
 * file-type recognises and no built-in kind takes) are uploaded, read by a one-stage pipeline
 * (channels, sample rate, duration and a peak envelope), listed and shown with the kind's own
 * fields, exported with its own columns and purged with the envelope it stored. Its facts live in
 * a table of its own (`audio_facts`), which the kind brings with it (MediaKind.tables): created
 * when the kind is registered, without a numbered migration in src/db/migrations/.
 * docs/architecture.md ("Adding a media kind") walks through it.
 */
import { t } from "elysia";
import type { AppContext } from "../../src/app.ts";
import type { OwnedMigration } from "../../src/db/owned-migrations.ts";
import type { FileRow } from "../../src/files/file.ts";
import type { MediaKind, PipelineReport } from "../../src/kinds/media-kind.ts";
import { failedStages, runStages, type FileWork, type Stage } from "../../src/processing/stage-runner.ts";
import { readObject } from "../../src/storage/blob-store.ts";

/** What the pipeline reads from a WAV header. */
export interface AudioFacts {
  channels: number;
  sample_rate: number;
  bits_per_sample: number;
  duration_seconds: number;
}

/** Where the peak envelope of a file is kept (outside its row: the kind's purge removes it). */
export const envelopeKey = (file: Pick<FileRow, "org_id" | "id">) => `orgs/${file.org_id}/files/${file.id}/audio/envelope.json`;

/** The fmt and data chunks of a canonical PCM WAV file; throws on anything else. */
export function readWav(bytes: Uint8Array): AudioFacts & { samples: Int16Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a RIFF/WAVE file");
  let fmt: { channels: number; rate: number; bits: number } | null = null;
  for (let at = 12; at + 8 <= bytes.byteLength; ) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === "fmt ") fmt = { channels: view.getUint16(at + 10, true), rate: view.getUint32(at + 12, true), bits: view.getUint16(at + 22, true) };
    if (tag(at) === "data") {
      if (!fmt || fmt.bits !== 16) throw new Error("only 16-bit PCM is read");
      const data = new Uint8Array(bytes.subarray(at + 8, at + 8 + size)); // a copy: a Buffer's slice shares its pool
      const frames = size / (fmt.channels * 2);
      return { channels: fmt.channels, sample_rate: fmt.rate, bits_per_sample: fmt.bits, duration_seconds: frames / fmt.rate, samples: new Int16Array(data.buffer) };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error("the WAV file has no data chunk");
}

/** A mono 16-bit WAV of a sine tone (the tests' fixture). */
export function wav(seconds: number, rate = 8000, hz = 440): Uint8Array {
  const frames = Math.round(seconds * rate);
  const bytes = new Uint8Array(44 + frames * 2);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, s: string) => [...s].forEach((c, i) => (bytes[at + i] = c.charCodeAt(0)));
  ascii(0, "RIFF");
  view.setUint32(4, 36 + frames * 2, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true);
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, "data");
  view.setUint32(40, frames * 2, true);
  for (let i = 0; i < frames; i++) view.setInt16(44 + i * 2, Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * 16_000), true);
  return bytes;
}

/** The kind's own tables, in its own numbering (append only). */
export const AUDIO_TABLES: OwnedMigration[] = [
  {
    version: 1,
    name: "audio_facts",
    sql: `CREATE TABLE audio_facts (
      file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
      channels INTEGER NOT NULL, sample_rate INTEGER NOT NULL, bits_per_sample INTEGER NOT NULL, duration_seconds REAL NOT NULL)`,
  },
  { version: 2, name: "audio_duration_index", sql: "CREATE INDEX audio_facts_duration ON audio_facts(duration_seconds)" },
];

type AudioDeps = Pick<AppContext, "db" | "sql" | "clock" | "metrics" | "config" | "blobs" | "files" | "progress">;

interface AudioWork extends FileWork<AudioDeps> {
  facts: AudioFacts | null;
}

const readStage: Stage<AudioWork> = {
  name: "read",
  required: true,
  async run(work) {
    const bytes = await readObject(work.ctx.blobs, work.file.blob_key!);
    if (!bytes) throw new Error("the original is missing");
    const { samples, ...facts } = readWav(bytes);
    // The largest amplitude of each tenth of the file: what a player draws.
    const step = Math.max(1, Math.ceil(samples.length / 10));
    const envelope = Array.from({ length: Math.ceil(samples.length / step) }, (_, i) =>
      samples.subarray(i * step, (i + 1) * step).reduce((peak, s) => Math.max(peak, Math.abs(s)), 0) / 32768,
    );
    await work.ctx.blobs.put(envelopeKey(work.file), new TextEncoder().encode(JSON.stringify(envelope)), "application/json");
    await work.job.transaction((tx) =>
      tx.run(
        `INSERT INTO audio_facts (file_id, channels, sample_rate, bits_per_sample, duration_seconds) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (file_id) DO UPDATE SET channels = excluded.channels, sample_rate = excluded.sample_rate,
           bits_per_sample = excluded.bits_per_sample, duration_seconds = excluded.duration_seconds`,
        [work.file.id, facts.channels, facts.sample_rate, facts.bits_per_sample, facts.duration_seconds],
      ),
    );
    work.facts = facts;
  },
};

/** The facts of several files in one read (through the data-access port), by file id. */
async function factsOfFiles(ctx: AudioDeps, fileIds: string[]): Promise<Map<string, AudioFacts>> {
  const rows = await ctx.sql.all<AudioFacts & { file_id: string }>(
    `SELECT file_id, channels, sample_rate, bits_per_sample, duration_seconds FROM audio_facts WHERE file_id IN (${ctx.sql.dialect.jsonValues})`,
    [JSON.stringify(fileIds)],
  );
  return new Map(rows.map((row) => [row.file_id, row]));
}

export function audioKind(ctx: AudioDeps): MediaKind<"audio"> {
  return {
    type: "audio",
    content: {
      type: "audio",
      detect: ({ ext, mime }) => (ext === "wav" ? { mime, format: "wav" } : null),
      accepts: "audio (wav)",
      maxStreamingBytes: 10 * 1024 ** 2,
      // Upload intents forecast the kind from these before the bytes arrive.
      hints: { contentTypes: /^audio\/(wav|x-wav|wave|vnd\.wave)$/, names: /\.wav$/i },
    },
    tables: AUDIO_TABLES,
    pipeline: {
      produces: { thumbnails: false, analysis: true },
      concurrency: 1,
      async run(job, file): Promise<PipelineReport> {
        const work: AudioWork = { ctx, job, file, outcomes: {}, signal: job.signal, facts: null };
        await runStages(work, [readStage]);
        return { summary: { audio_id: file.id, ...work.facts, stages: work.outcomes }, warnings: failedStages(work.outcomes) };
      },
    },
    view: {
      summaryFields: {
        duration_seconds: t.Union([t.Number(), t.Null()]),
        channels: t.Union([t.Integer(), t.Null()]),
        sample_rate: t.Union([t.Integer(), t.Null()]),
        audio_url: t.Union([t.String(), t.Null()]),
      },
      detailFields: { envelope: t.Union([t.Array(t.Number()), t.Null()]) },
      // A page of audio files reads their facts once.
      async summaries(rows, urls) {
        const facts = await factsOfFiles(ctx, rows.map((row) => row.id));
        return Promise.all(
          rows.map(async (row) => {
            const own = facts.get(row.id);
            return { duration_seconds: own?.duration_seconds ?? null, channels: own?.channels ?? null, sample_rate: own?.sample_rate ?? null, audio_url: await urls.original(row) };
          }),
        );
      },
      async detail(row) {
        const stored = await readObject(ctx.blobs, envelopeKey(row));
        return { envelope: stored ? (JSON.parse(stored.toString()) as number[]) : null };
      },
    },
    exports: {
      columns: [
        { key: "audio_duration_seconds", display: "Duration (s)" },
        { key: "audio_sample_rate", display: "Sample rate (Hz)" },
      ],
      async read(rows) {
        const facts = await factsOfFiles(ctx, rows.map((row) => row.id));
        return (row, key) => (key === "audio_duration_seconds" ? facts.get(row.id)?.duration_seconds : facts.get(row.id)?.sample_rate) ?? null;
      },
    },
    async purge(fileId) {
      const row = await ctx.files.byId(fileId);
      if (row) await ctx.blobs.delete(envelopeKey(row));
    },
  };
}
