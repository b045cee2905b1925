/**
 * The resident memory of a process, from /proc/<pid>/status (Linux): what the document reader's
 * watchdog and the bombs benchmark measure. Null where /proc is not available or the process is
 * gone.
 */
import { readFileSync } from "node:fs";

export function residentBytes(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "latin1");
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}
