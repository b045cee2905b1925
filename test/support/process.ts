/** Runs Mediabox as a child process (the CLI, or the compiled binary) and talks to it. */
import type { Subprocess } from "bun";
import { appendFileSync, readFileSync } from "node:fs";

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export async function run(cmd: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CommandResult> {
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode, stdout, stderr };
}

export interface ServerProcess {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Starts a server command and resolves once it logs the URL it listens on. */
export async function spawnServer(
  cmd: string[],
  /** `logTo`: a file the server's stdout (its log lines) is appended to, for reading after a bench. */
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; logTo?: string } = {},
): Promise<ServerProcess> {
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd ?? process.cwd(),
    // The built-in text model unless the caller names one (see startTestServer).
    env: { ...process.env, MEDIABOX_PORT: "0", MEDIABOX_HOST: "127.0.0.1", MEDIABOX_TEXT_VOCABULARY_WORDS: "0", MEDIABOX_TEXT_EMBEDDING_MODEL: "use-lite-sif", ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    proc.kill(signal);
    return proc.exited;
  };
  // The child's stderr is read as it comes (the last 64 KB kept for the failure message): a pipe
  // nobody reads blocks a server that logs more than its buffer there.
  let stderrTail = "";
  const stderrDrained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) stderrTail = (stderrTail + decoder.decode(chunk, { stream: true })).slice(-65_536);
  })().catch(() => {});
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)]);
    if (!chunk || chunk.done) break;
    seen += decoder.decode(chunk.value, { stream: true });
    for (const line of seen.split("\n")) {
      if (!line.includes('"mediabox listening"')) continue;
      // Keep draining stdout so the child never blocks on a full pipe.
      if (options.logTo) appendFileSync(options.logTo, seen);
      void (async () => {
        for (;;) {
          const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
          if (next.done) break;
          if (options.logTo) appendFileSync(options.logTo, next.value);
        }
      })();
      return { url: JSON.parse(line).url as string, proc, stop };
    }
  }
  proc.kill("SIGKILL");
  await proc.exited;
  await stderrDrained;
  throw new Error(`server did not start: ${cmd.join(" ")}\nstdout: ${seen}\nstderr: ${stderrTail}`);
}

/** The pid of a server process's document reader child (its command line names the hidden command), if one runs. */
export function readerChildOf(serverPid: number): number | null {
  try {
    const children = readFileSync(`/proc/${serverPid}/task/${serverPid}/children`, "latin1").trim().split(/\s+/).filter(Boolean).map(Number);
    for (const pid of children) if (readFileSync(`/proc/${pid}/cmdline`, "latin1").includes("__document-reader")) return pid;
  } catch {
    // The server or the child just exited.
  }
  return null;
}
