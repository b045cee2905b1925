/**
 * `mediabox import --wait`: after the upload, follows the analysis of the files it stored (or
 * found already stored) to the end. It asks `GET /files/uploads-status/{id}` for the oldest file
 * not finished yet, so about one request a second however many files there are (a server
 * analyses in about the order files arrived). On a terminal one line is redrawn: files analysed
 * of all, failures, and what the file in progress is doing ("report.pdf: reading the pages, 3 of
 * 10 pages"); otherwise one line per failed file. Returns the files whose analysis failed.
 */
import type { ImportClient } from "./import-client.ts";
import { formatDuration, printable, type ImportOutput } from "./import-progress.ts";

export interface Analysed {
  rel: string;
  fileId: string;
}

export interface AnalysisSummary {
  completed: number;
  failed: { rel: string; reason: string }[];
  elapsedMs: number;
}

type Status = {
  unified_status: string;
  is_terminal: boolean;
  error_message: string | null;
  progress?: { stage: string; stage_number: number; stage_count: number; percent: number; unit: string | null; done: number | null; total: number | null } | null;
};

const POLL_MS = 1000;

/** "reading the pages, 3 of 10 pages (step 1 of 4)" from a status's live progress. */
export function describeProgress(p: NonNullable<Status["progress"]>): string {
  const units = p.unit && p.total ? `, ${p.done ?? 0} of ${p.total} ${p.unit}${p.total === 1 ? "" : "s"}` : "";
  return `${p.stage}${units} (step ${p.stage_number} of ${p.stage_count}, ${p.percent} %)`;
}

export async function followAnalysis(
  files: Analysed[],
  client: ImportClient,
  io: { out: ImportOutput; sleep: (ms: number) => Promise<void>; now: () => number },
): Promise<AnalysisSummary> {
  const started = io.now();
  const tty = io.out.isTTY === true;
  const pending = [...files];
  const failed: AnalysisSummary["failed"] = [];
  let completed = 0;
  let shown = false;
  const draw = (current: string | null) => {
    if (!tty) return;
    const done = files.length - pending.length;
    io.out.write(`\r\x1b[KAnalysing [${String(done).padStart(String(files.length).length)}/${files.length}]  ${failed.length} failed  ${formatDuration(io.now() - started)}${current ? `  ${printable(current)}` : ""}`);
    shown = true;
  };
  const line = (text: string) => {
    if (tty && shown) io.out.write("\r\x1b[K");
    io.out.write(`${printable(text)}\n`);
    shown = false;
  };
  line(`Waiting for the analysis of ${files.length} file${files.length === 1 ? "" : "s"}`);
  while (pending.length) {
    const next = pending[0]!;
    const answer = await client.json("GET", `/files/uploads-status/${next.fileId}`);
    if (answer.status === 404) {
      // Deleted meanwhile (by someone else): nothing left to wait for.
      pending.shift();
      failed.push({ rel: next.rel, reason: "the file was deleted before its analysis ended" });
      line(`analysis failed: ${next.rel}: deleted before its analysis ended`);
      continue;
    }
    const status = answer.body as Status;
    if (answer.status === 200 && status.is_terminal) {
      pending.shift();
      if (status.unified_status === "failed") {
        const reason = status.error_message ?? "failed";
        failed.push({ rel: next.rel, reason });
        line(`analysis failed: ${next.rel}: ${reason}`);
      } else {
        completed += 1;
        if (!tty) line(`analysed: ${next.rel} (${status.unified_status})`);
      }
      draw(null);
      continue;
    }
    draw(answer.status === 200 ? `${next.rel}: ${status.progress ? describeProgress(status.progress) : status.unified_status}` : null);
    await io.sleep(POLL_MS);
  }
  if (tty && shown) io.out.write("\r\x1b[K");
  const elapsedMs = io.now() - started;
  io.out.write(`Analysis: ${completed} completed, ${failed.length} failed in ${formatDuration(elapsedMs)}\n`);
  return { completed, failed, elapsedMs };
}
