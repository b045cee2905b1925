/**
 * The model sources step: installs the pinned model packages of scripts/models/catalogue.ts into
 * the models directory (MEDIABOX_MODELS_DIR, default models/). `npm start` runs it first (a few
 * stat calls when everything is installed); `npm run models` runs it on its own.
 *
 *   bun scripts/models/main.ts [install] [--dir DIR] [--at-start] [NAME ...]
 *   bun scripts/models/main.ts pin NAME      download NAME and print the SHA-256 pins to paste in
 *   bun scripts/models/main.ts list          the catalogue, and which entries are installed
 *
 * When a registry cannot be reached it prints ONE line and exits 0: the built-in models serve
 * until the step runs again. A package that does not match its pins is refused (exit 1; with
 * --at-start, exit 0 so the server still starts, on the built-in models for that role).
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { CATALOGUE, type ModelPackage } from "./catalogue.ts";
import { computePins, installModels, isCurrent, type Outcome, sourceOf } from "./install.ts";

export interface RunOptions {
  argv: string[];
  catalogue?: ModelPackage[];
  env?: Record<string, string | undefined>;
  /** Where lines go (stderr by default). */
  log?: (line: string) => void;
}

/** The one line for packages that could not be fetched. */
export function unavailableLine(outcomes: Outcome[]): string | null {
  const missing = outcomes.filter((o) => o.status === "unavailable");
  if (!missing.length) return null;
  const reasons = [...new Set(missing.map((o) => `${o.error.registry}: ${o.error.message}`))].join("; ");
  return (
    `models: could not fetch ${missing.map((o) => o.name).join(", ")} (${reasons}); ` +
    `the built-in models serve until \`npm run models\` runs with the registries reachable`
  );
}

export async function run(options: RunOptions): Promise<number> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const env = options.env ?? process.env;
  const catalogue = options.catalogue ?? CATALOGUE;
  const { values, positionals } = parseArgs({
    args: options.argv,
    allowPositionals: true,
    options: { dir: { type: "string" }, "at-start": { type: "boolean", default: false } },
  });
  const modelsDir = path.resolve(values.dir ?? env.MEDIABOX_MODELS_DIR ?? path.join(import.meta.dir, "..", "..", "models"));
  const [command = "install", ...names] = positionals[0] && ["install", "pin", "list"].includes(positionals[0]) ? positionals : ["install", ...positionals];
  const unknown = names.filter((n) => !catalogue.some((p) => p.name === n));
  if (unknown.length) {
    log(`models: unknown model ${unknown.join(", ")}; the catalogue has ${catalogue.map((p) => p.name).join(", ")}`);
    return 2;
  }
  const chosen = names.length ? catalogue.filter((p) => names.includes(p.name)) : catalogue;

  if (command === "list") {
    for (const pkg of chosen) log(`${pkg.name}\t${pkg.role}\t${sourceOf(pkg)}\t${pkg.license}\t${isCurrent(pkg, modelsDir) ? "installed" : "not installed"}`);
    return 0;
  }
  if (command === "pin") {
    if (chosen.length !== 1 || !names.length) {
      log("models: pin takes one model name");
      return 2;
    }
    const pins = await computePins(chosen[0]!, modelsDir, env);
    process.stdout.write(`sha256: "${pins.sha256}",\n`);
    for (const [target, sha] of Object.entries(pins.files)) process.stdout.write(`  "${target}": ${sha}\n`);
    return 0;
  }

  const outcomes = await installModels({ modelsDir, catalogue: chosen, env, log });
  const unavailable = unavailableLine(outcomes);
  if (unavailable) log(unavailable);
  const refused = outcomes.filter((o) => o.status === "refused");
  for (const o of refused) log(`models: REFUSED ${o.name}: ${o.reason}`);
  if (!values["at-start"] && outcomes.every((o) => o.status === "current")) log(`models: ${outcomes.length} model folder(s) in ${modelsDir} are current`);
  return refused.length && !values["at-start"] ? 1 : 0;
}

if (import.meta.main) {
  try {
    process.exit(await run({ argv: process.argv.slice(2) }));
  } catch (err) {
    process.stderr.write(`models: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(process.argv.includes("--at-start") ? 0 : 1);
  }
}
