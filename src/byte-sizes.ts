/**
 * How sizes are written for people, in the server's messages and the dashboard alike: binary
 * multiples with one decimal at most ("79 B", "1.5 KB", "25 MB", "3.4 MB"). The import CLI's
 * progress line counts in decimal units, as transfer rates are read (cli/import-progress.ts).
 */
const UNITS = ["KB", "MB", "GB", "TB"];

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Math.round(value * 10) / 10} ${UNITS[unit]}`;
}
