/** How the dashboard writes quantities for people. */

const UNITS = ["KB", "MB", "GB", "TB"];

/** 79 B, 12 KB, 3.4 MB, 1.2 GB (binary multiples, one decimal below 10). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}
