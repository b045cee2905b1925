/** What the benches read of a server process from /proc: resident memory and CPU time, whole and by thread. */
import { readdirSync, readFileSync } from "node:fs";

export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) * 1024 : 0;
}

/** utime + stime of a /proc stat file, in seconds (USER_HZ 100). */
function statSeconds(path: string): number {
  const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds used so far by a process (all its threads), and by its main thread alone (the event loop). */
export function cpuSeconds(pid: number): { total: number; main: number } {
  return { total: statSeconds(`/proc/${pid}/stat`), main: statSeconds(`/proc/${pid}/task/${pid}/stat`) };
}

/** CPU seconds by thread name ("main" for the main thread; trailing numbers of names folded into "#"). */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\d+$/, "#");
      out.set(name, (out.get(name) ?? 0) + statSeconds(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
