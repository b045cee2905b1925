/**
 * `mediabox import`: what the user sees. On a terminal one status line is redrawn in place
 * (files done/total, files/s, MB/s, ETA, failures), with failures printed above it as they
 * happen; otherwise one plain line per file. Both end with the same summary.
 */

export interface ImportOutput {
  write(text: string): unknown;
  /** True on a terminal: redraw one progress line instead of logging every file. */
  isTTY?: boolean;
  columns?: number;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(Math.round(seconds % 60)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

export interface ProgressCounts {
  total: number;
  totalBytes: number;
  done: number;
  /** Bytes of files finished, whatever their outcome (for the ETA). */
  doneBytes: number;
  /** Bytes sent to the server so far (for MB/s). */
  sentBytes: number;
  failed: number;
}

/**
 * A file name may hold newlines, carriage returns and terminal escapes: each line printed shows
 * control characters escaped (`\n`, `\x1b`), so a name can neither split a line nor draw on the terminal.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}

/** Redraws at most this often on a terminal. */
const REDRAW_MS = 200;

export class Progress {
  private readonly tty: boolean;
  private lastDraw = 0;
  private note: string | null = null;
  private shown = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly out: ImportOutput,
    private readonly counts: ProgressCounts,
    private readonly now: () => number,
    private readonly started: number,
  ) {
    this.tty = out.isTTY === true;
    if (this.tty) {
      this.timer = setInterval(() => this.draw(), 1000);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  get isTTY(): boolean {
    return this.tty;
  }

  /** A line kept in the output (above the status line on a terminal). */
  line(text: string): void {
    if (this.tty && this.shown) this.out.write("\r\x1b[K");
    this.out.write(printable(text) + "\n");
    this.shown = false;
    if (this.tty) this.draw(true);
  }

  /** One file's outcome: logged when not on a terminal (failures always are). */
  file(text: string, important = false): void {
    if (!this.tty || important) this.line(text);
    else this.update();
  }

  /** A passing condition shown in the status line (a wait on a rate limit), or logged without a terminal. */
  setNote(note: string | null, log = true): void {
    this.note = note;
    if (this.tty) this.draw(true);
    else if (note && log) this.out.write(printable(note) + "\n");
  }

  update(): void {
    if (this.tty) this.draw(false);
  }

  statusLine(): string {
    const c = this.counts;
    const elapsed = Math.max(this.now() - this.started, 1) / 1000;
    const filesPerSecond = c.done / elapsed;
    const bytesPerSecond = c.sentBytes / elapsed;
    const width = String(c.total).length;
    let eta = "--";
    if (c.done >= c.total) eta = "0 s";
    else if (c.doneBytes > 0 && c.totalBytes > 0) eta = formatDuration(((c.totalBytes - c.doneBytes) / (c.doneBytes / elapsed)) * 1000);
    else if (c.done > 0) eta = formatDuration(((c.total - c.done) / filesPerSecond) * 1000);
    const parts = [
      `[${String(c.done).padStart(width)}/${c.total}]`,
      `${filesPerSecond.toFixed(1)} files/s`,
      `${(bytesPerSecond / 1e6).toFixed(1)} MB/s`,
      `ETA ${eta}`,
      `${c.failed} failed`,
    ];
    if (this.note) parts.push(printable(this.note));
    return parts.join("  ");
  }

  private draw(force = false): void {
    if (!this.tty) return;
    const now = this.now();
    if (!force && now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    let text = this.statusLine();
    const columns = this.out.columns ?? 0;
    if (columns > 10 && text.length >= columns) text = text.slice(0, columns - 2) + "…";
    this.out.write("\r\x1b[K" + text);
    this.shown = true;
  }

  /** Clears the status line for good. */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.tty && this.shown) this.out.write("\r\x1b[K");
    this.shown = false;
  }
}
