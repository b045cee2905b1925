/**
 * No import cycle between the top-level folders of src/ (type-only imports included): the tree
 * reads from the composition root (src/app.ts) down through the features and media kinds to the
 * toolkits, and a folder can be understood, tested and changed without the ones above it.
 * `bun scripts/import-graph.ts` prints any cycle with the files that make each of its edges.
 */
import { expect, test } from "bun:test";
import { cycles, folderGraph } from "../scripts/import-graph.ts";

test("no import cycle across the top-level folders of src/", async () => {
  const graph = await folderGraph();
  const found = cycles(graph.values()).map((component) => {
    const members = new Set(component);
    const inside = [...graph.values()].filter((edge) => members.has(edge.from) && members.has(edge.to));
    return [`cycle: ${component.join(", ")}`, ...inside.map((edge) => `  ${edge.from} -> ${edge.to} (${edge.via.join("; ")})`)].join("\n");
  });
  expect(found).toEqual([]);
});

test("nothing below the composition root imports it", async () => {
  const graph = await folderGraph();
  const intoRoot = [...graph.values()].filter((edge) => edge.to === "app.ts" && edge.from !== "server.ts");
  expect(intoRoot.flatMap((edge) => edge.via)).toEqual([]);
});

test("the graph sees type-only imports and finds cycles", async () => {
  const graph = await folderGraph();
  // A type-only import (kinds/media-kind.ts names the file row's type and nothing else of files/).
  expect(graph.get("kinds -> files")?.via).toContain("kinds/media-kind.ts → files/file.ts");
  // A cycle is found where there is one.
  expect(cycles([{ from: "a", to: "b", via: [] }, { from: "b", to: "a", via: [] }, { from: "b", to: "c", via: [] }])).toEqual([["a", "b"]]);
  // Folders never import themselves, and the dashboard's browser program is not part of src/'s graph.
  expect([...graph.values()].some((edge) => edge.from === edge.to)).toBe(false);
  expect([...graph.values()].some((edge) => edge.via.some((via) => via.includes("dashboard/web/")))).toBe(false);
});
