/**
 * The import graph of src/ between top-level folders (and the files at the root of src/, each a
 * node of its own). Type-only imports count: a type is a dependency a reader follows as much as a
 * value. The dashboard's browser code (src/dashboard/web) is a separate program and is left out.
 *
 *   bun scripts/import-graph.ts          prints the cycles (strongly connected components) and
 *                                        the edges inside them, with one importing file each
 *
 * test/imports.test.ts holds the rule: no cycle across folders, beyond a shrinking allow-list.
 */
import { Glob } from "bun";
import { dirname, join, relative, resolve } from "node:path";

export const SRC = join(import.meta.dir, "..", "src");
const EXCLUDED = ["dashboard/web/"];

/** `import … from`, `export … from`, `import "…"`, `import("…")` (values and types), `require("…")`. */
const SPECIFIERS = [
  /^\s*(?:import|export)\s+(?:type\s+)?[\w$*{},\s]*?\s*from\s*["']([^"']+)["']/gm,
  /^\s*import\s*["']([^"']+)["']/gm,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  /\brequire\(\s*["']([^"']+)["']\s*\)/g,
];

/** The node a file under src/ belongs to: its top-level folder, or the file itself at the root. */
export function nodeOf(path: string): string {
  const slash = path.indexOf("/");
  return slash === -1 ? path : path.slice(0, slash);
}

export interface ImportEdge {
  from: string;
  to: string;
  /** The importing files (relative to src/) with what each imports, sorted. */
  via: string[];
}

/** Edges between nodes, keyed "from -> to". */
export async function folderGraph(src = SRC): Promise<Map<string, ImportEdge>> {
  const edges = new Map<string, ImportEdge>();
  for await (const path of new Glob("**/*.{ts,tsx}").scan(src)) {
    if (EXCLUDED.some((prefix) => path.startsWith(prefix))) continue;
    const text = await Bun.file(join(src, path)).text();
    for (const pattern of SPECIFIERS) {
      for (const match of text.matchAll(pattern)) {
        const specifier = match[1]!;
        if (!specifier.startsWith(".")) continue;
        const target = relative(src, resolve(dirname(join(src, path)), specifier));
        if (target.startsWith("..") || EXCLUDED.some((prefix) => target.startsWith(prefix))) continue;
        const from = nodeOf(path);
        const to = nodeOf(target);
        if (from === to) continue;
        const key = `${from} -> ${to}`;
        const edge = edges.get(key) ?? { from, to, via: [] };
        const via = `${path} → ${target}`;
        if (!edge.via.includes(via)) edge.via.push(via);
        edges.set(key, edge);
      }
    }
  }
  for (const edge of edges.values()) edge.via.sort();
  return edges;
}

/** Strongly connected components with more than one node (Tarjan), each sorted, largest first. */
export function cycles(edges: Iterable<ImportEdge>): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return components.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

if (import.meta.main) {
  const edges = await folderGraph();
  const components = cycles(edges.values());
  if (components.length === 0) console.log(`no cycle across ${new Set([...edges.values()].flatMap((e) => [e.from, e.to])).size} folders`);
  for (const component of components) {
    const members = new Set(component);
    console.log(`cycle of ${component.length}: ${component.join(", ")}`);
    const inside = [...edges.values()].filter((edge) => members.has(edge.from) && members.has(edge.to));
    for (const edge of inside.sort((a, b) => `${a.from} ${a.to}`.localeCompare(`${b.from} ${b.to}`))) {
      console.log(`  ${edge.from} -> ${edge.to}   (${edge.via.length}: ${edge.via.slice(0, 2).join("; ")}${edge.via.length > 2 ? "; …" : ""})`);
    }
  }
}
