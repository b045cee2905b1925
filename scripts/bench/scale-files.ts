/**
 * bench:scale's mixed files, made the same every time from their index: photos of five sizes and
 * three formats (sharp, test/support/images.ts), pictures of text (read by OCR), PDFs of one to four
 * pages of prose (pdf-lib, its dates fixed), Markdown and plain-text notes, and two-second H.264
 * clips (ffmpeg's test sources). The kinds are interleaved in the list so uploads mix them too.
 * Every file's bytes differ (a duplicate upload would be skipped as already stored).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PDFDocument, StandardFonts, rgb } from "pdf-lib";
import { resolveFfmpegPaths } from "../../src/video/ffmpeg-tools.ts";
import { wrap } from "../../test/support/documents.ts";
import { photo, textImage } from "../../test/support/images.ts";
import { seededRandom } from "./seeded-random.ts";

export type FileKind = "photo" | "text-image" | "pdf" | "note" | "video";

export interface BenchFile {
  index: number;
  kind: FileKind;
  name: string;
  path: string;
  size: number;
  sha256: string;
}

/**
 * One cycle of 20 files: 10 photos, 1 picture of text, 4 PDFs, 4 notes, 1 clip. What each costs a
 * worker, measured on SQLite with one `all` process pinned to one core, 9 files of a kind after a
 * first one (2026-12-02): a photo 0.72 s of CPU (decode, variants, the vision models), a picture
 * of text 0.77 s (OCR too), a clip 0.70 s (ffmpeg's keyframes, then the models on them), a PDF
 * 0.23 s, a note 0.02 s; the process was busy 84-95 % of the wall time. The whole mix, 500 files
 * through one such process: 163 s of CPU in 164 s (0.33 s a file), so the work is the workers'.
 */
const CYCLE: FileKind[] = ["photo", "pdf", "photo", "note", "photo", "photo", "text-image", "photo", "pdf", "note", "photo", "photo", "pdf", "note", "photo", "video", "photo", "pdf", "note", "photo"];
const PHOTO_SIZES: [number, number, "jpeg" | "png" | "webp"][] = [[640, 480, "jpeg"], [1280, 960, "jpeg"], [2048, 1536, "jpeg"], [1600, 1200, "webp"], [1024, 768, "png"]];

const WORDS = (
  "pump valve conveyor crusher quarry inspection pressure seal flange gasket belt shift crew report site haul road dust spray loader tyre axle " +
  "bench edge radio truck load tonne weather storm night morning station north south budget spare part overtime fuel price board meeting " +
  "hall schedule maintenance programme replacement column figure table heading owner action finding period operations procedure equipment " +
  "safety record flow head cavitation drip motor bearing vibration temperature gauge sensor alarm log checklist permit contractor survey"
).split(" ");


function sentence(next: () => number, index: number): string {
  const words = Array.from({ length: 8 + Math.floor(next() * 12) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
  words[0] = words[0]![0]!.toUpperCase() + words[0]!.slice(1);
  return `${words.join(" ")} ${index}.`;
}

function paragraphs(seed: number, count: number): string[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, (_, p) => Array.from({ length: 3 + Math.floor(next() * 4) }, (_, s) => sentence(next, seed * 100 + p * 10 + s)).join(" "));
}

async function pdfOf(index: number): Promise<Uint8Array> {
  // No producer or dates written: the same index gives the same bytes.
  const pdf = await PDFDocument.create({ updateMetadata: false });
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const pages = 1 + (index % 4);
  const text = paragraphs(index, pages * 5);
  for (let p = 0; p < pages; p++) {
    const page = pdf.addPage([595, 842]);
    page.drawText(`Site report ${index}, part ${p + 1}`, { x: 50, y: 780, size: 18, font: bold });
    let y = 745;
    for (const para of text.slice(p * 5, p * 5 + 5)) {
      for (const line of wrap(para, 90)) {
        if (y < 60) break;
        page.drawText(line, { x: 50, y, size: 11, font, color: rgb(0, 0, 0) });
        y -= 15;
      }
      y -= 10;
    }
  }
  return pdf.save();
}

function noteOf(index: number): { bytes: Uint8Array; ext: string } {
  const text = paragraphs(index, 4 + (index % 6));
  const body = index % 2 === 0 ? [`# Site notes ${index}`, "", ...text.flatMap((p, i) => [`## Part ${i + 1}`, "", p, ""])].join("\n") : [`SITE NOTES ${index}`, "", ...text.flatMap((p) => [p, ""])].join("\n");
  return { bytes: new TextEncoder().encode(body), ext: index % 2 === 0 ? "md" : "txt" };
}

async function videoOf(index: number, path: string): Promise<void> {
  const { ffmpeg } = resolveFfmpegPaths();
  const sources = ["testsrc2", "smptebars", "testsrc", "rgbtestsrc"];
  // One thread: libx264's output then depends only on its input, and the title makes each clip's bytes differ.
  const result = Bun.spawnSync([
    ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
    "-f", "lavfi", "-i", `${sources[index % sources.length]}=s=320x240:r=15:d=1`,
    "-f", "lavfi", "-i", `${sources[(index + 1) % sources.length]}=s=320x240:r=15:d=1`,
    "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0,format=yuv420p[v]", "-map", "[v]",
    "-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-threads", "1", "-metadata", `title=clip ${index}`, "-fflags", "+bitexact", path,
  ]);
  if (result.exitCode !== 0) throw new Error(`ffmpeg could not make clip ${index}: ${result.stderr.toString()}`);
}

/** Writes `count` mixed files into `dir` and answers them with their SHA-256. */
export async function makeMixedFiles(dir: string, count: number): Promise<BenchFile[]> {
  mkdirSync(dir, { recursive: true });
  const files: BenchFile[] = [];
  let photos = 0;
  for (let index = 0; index < count; index++) {
    const kind = CYCLE[index % CYCLE.length]!;
    let bytes: Uint8Array;
    let ext: string;
    let path: string;
    if (kind === "photo") {
      const [w, h, format] = PHOTO_SIZES[photos++ % PHOTO_SIZES.length]!;
      bytes = await photo(index, w, h, format);
      ext = format === "jpeg" ? "jpg" : format;
    } else if (kind === "text-image") {
      bytes = await textImage([`Delivery note ${1000 + index}`, `Pallet ${index % 9} of 9, fragile`, `Site B, bay ${index % 40}`]);
      ext = "png";
    } else if (kind === "pdf") {
      bytes = await pdfOf(index);
      ext = "pdf";
    } else if (kind === "note") {
      ({ bytes, ext } = noteOf(index));
    } else {
      ext = "mp4";
      path = join(dir, `file-${String(index).padStart(4, "0")}.${ext}`);
      await videoOf(index, path);
      bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
    }
    const name = `file-${String(index).padStart(4, "0")}.${ext}`;
    path = join(dir, name);
    if (kind !== "video") await Bun.write(path, bytes);
    files.push({ index, kind, name, path, size: bytes.length, sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex") });
  }
  const seen = new Map<string, string>();
  for (const file of files) {
    const other = seen.get(file.sha256);
    if (other) throw new Error(`${file.name} has the same bytes as ${other}: the server would skip it as already stored`);
    seen.set(file.sha256, file.name);
  }
  return files;
}

/** "250 photos, 25 pictures of text, ..." */
export function describeMix(files: BenchFile[]): string {
  const names: Record<FileKind, string> = { photo: "photos", "text-image": "pictures of text", pdf: "PDFs", note: "text notes", video: "clips" };
  const counts = new Map<FileKind, number>();
  for (const file of files) counts.set(file.kind, (counts.get(file.kind) ?? 0) + 1);
  const bytes = files.reduce((n, f) => n + f.size, 0);
  return `${[...counts].map(([kind, n]) => `${n} ${names[kind]}`).join(", ")}; ${(bytes / 1e6).toFixed(1)} MB`;
}
