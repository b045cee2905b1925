/**
 * bench:scale's processes: the cores this bench may use, `mediabox serve` started pinned to one of
 * them with `taskset`, the CPU a process and its children (document reader, ffmpeg) have used, and
 * stopping every process started, children included, by PID, also after a failure.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, type ServerProcess } from "../../test/support/process.ts";
import { waitFor } from "../../test/support/polling.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/** The CPUs this process may run on (its affinity), e.g. [0, 1]. */
export function allowedCores(): number[] {
  const list = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0";
  return list.split(",").flatMap((part) => {
    const [from, to = from] = part.split("-").map(Number) as [number, number?];
    return Array.from({ length: to! - from + 1 }, (_, i) => from + i);
  });
}

/** Pins every thread of a running process (and so what it starts later) to one core. */
export function pinProcess(pid: number, core: number): void {
  const result = Bun.spawnSync(["taskset", "-a", "-p", "-c", String(core), String(pid)], { stdout: "ignore", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`taskset could not pin pid ${pid} to core ${core}: ${result.stderr.toString()}`);
}

/** The live descendants of a process, children first. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, "latin1").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      // The thread ended meanwhile.
    }
    for (const child of children) out.push(child, ...descendants(child));
  }
  return out;
}

function statCpuSeconds(pid: number, withReaped: boolean): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime, stime; cutime, cstime: children it has waited for (ffmpeg runs that ended).
    const own = Number(fields[11]) + Number(fields[12]);
    return (withReaped ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by a process, its live descendants and the children it reaped. */
export function treeCpuSeconds(pid: number): number {
  return statCpuSeconds(pid, true) + descendants(pid).reduce((sum, child) => sum + statCpuSeconds(child, true), 0);
}

export interface PinnedServer {
  name: string;
  core: number | null;
  server: ServerProcess;
  pid: number;
  log: string;
}

/** Every process this bench started and has not seen exit, to stop at the end whatever happens. */
const started = new Set<PinnedServer>();

/**
 * Starts `bun src/main.ts serve` under `taskset -c core` (null: unpinned) and resolves once it
 * listens; its log goes to `log`. A process that exits first rejects with what it printed on stderr.
 */
export async function startPinned(name: string, core: number | null, env: Record<string, string>, log: string): Promise<PinnedServer> {
  const cmd = [...(core === null ? [] : ["taskset", "-c", String(core)]), process.execPath, MAIN, "serve"];
  // taskset execs the command: the PID is the server's own.
  const server = await spawnServer(cmd, { env, logTo: log, timeoutMs: 120_000 });
  const pinned = { name, core, server, pid: server.proc.pid, log };
  started.add(pinned);
  return pinned;
}

/** Kills a process and its descendants with -9 at once (the crash the kill run simulates); resolves once all are gone. */
export async function killTree(target: PinnedServer): Promise<void> {
  const children = descendants(target.pid);
  target.server.proc.kill("SIGKILL");
  await target.server.proc.exited;
  started.delete(target);
  await killOrphans(children);
}

/** Kills what is still alive of `pids` (children a killed server left) and waits until they are gone. */
async function killOrphans(pids: number[]): Promise<void> {
  const alive = (pid: number) => {
    try {
      // Signal 0: only asks whether it exists; a zombie child of ours no longer counts.
      process.kill(pid, 0);
      return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false;
    }
  };
  for (const pid of pids) {
    if (!alive(pid)) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  await waitFor(() => pids.every((pid) => !alive(pid)), { what: `the killed server's children ${pids.join(", ")} to exit`, timeoutMs: 30_000 });
}

/** Stops a server as an operator would (SIGTERM), then -9 if it has not exited by the deadline; its children too. */
export async function stopServer(target: PinnedServer, timeoutMs = 30_000): Promise<void> {
  if (!started.has(target)) return;
  const children = descendants(target.pid);
  target.server.proc.kill("SIGTERM");
  const exited = await Promise.race([target.server.proc.exited.then(() => true), Bun.sleep(timeoutMs).then(() => false)]);
  if (!exited) {
    target.server.proc.kill("SIGKILL");
    await target.server.proc.exited;
  }
  started.delete(target);
  await killOrphans(children);
}

/** Stops every server still running (the end of a run, or a failure anywhere). */
export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((target) => stopServer(target)));
}
