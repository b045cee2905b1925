/**
 * The dashboard's browser code, bundled by Bun.build from src/dashboard/web/ (Preact, no CDN):
 * in development on first request, in the compiled binary at build time (scripts/build.ts
 * replaces this module with one that serves the files it embedded).
 */
import { join } from "node:path";

export interface DashboardFile {
  /** Name under /app/assets/. */
  name: string;
  type: string;
  bytes: Uint8Array<ArrayBuffer>;
}

const TYPES: Record<string, string> = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json" };

/** Bundles main.tsx (and the CSS it imports) into files named by content hash. */
export async function bundleDashboard(options: { minify?: boolean } = {}): Promise<DashboardFile[]> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "web", "main.tsx")],
    target: "browser",
    minify: options.minify ?? true,
    // Pages imported with import() (the map) become chunks of their own, loaded when first shown.
    splitting: true,
    naming: { entry: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]", chunk: "chunk-[hash].[ext]" },
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
  });
  if (!result.success) throw new Error(`the dashboard did not build: ${result.logs.map((l) => l.message).join("; ")}`);
  const files: DashboardFile[] = [];
  for (const output of result.outputs) {
    const name = output.path.replace(/^.*[\\/]/, "");
    const ext = name.slice(name.lastIndexOf("."));
    files.push({ name, type: TYPES[ext] ?? "application/octet-stream", bytes: new Uint8Array(await output.arrayBuffer()) });
  }
  return files;
}

/** The files the server serves: built once per server, on first request. */
export function dashboardFiles(): Promise<DashboardFile[]> {
  return bundleDashboard();
}
