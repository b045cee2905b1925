/**
 * The fixed split of every bench dataset into a tuning half and a held-out half. Rules and models
 * are tuned on the first; a change is kept only when the second improves too, so the figures
 * printed for the held-out half say how the code does on pages it was not tuned on.
 *
 * An item's half depends only on the dataset's name and the item's own id (SHA-256 of both, items
 * ranked by it, the first ceil(n/2) tuning): adding, removing or reordering other items never moves
 * an item to the other half unless it sits at the boundary, and every bench that names the same
 * dataset and ids gets the same halves.
 */
import { createHash } from "node:crypto";

export type Half = "tuning" | "held-out";
export const HALVES: readonly Half[] = ["tuning", "held-out"];

const rank = (dataset: string, id: string) => createHash("sha256").update(`${dataset}\u0000${id}`).digest("hex");

/** Each id's half within `dataset` (ids must be unique). */
export function halves(dataset: string, ids: readonly string[]): Map<string, Half> {
  if (new Set(ids).size !== ids.length) throw new Error(`${dataset}: item ids must be unique to split them`);
  const ranked = [...ids].sort((a, b) => (rank(dataset, a) < rank(dataset, b) ? -1 : 1));
  const tuning = Math.ceil(ranked.length / 2);
  return new Map(ranked.map((id, i) => [id, i < tuning ? "tuning" : "held-out"]));
}

/** The items of `dataset` in each half, in their given order. */
export function splitItems<T>(dataset: string, items: readonly T[], id: (item: T) => string): Record<Half, T[]> {
  const half = halves(dataset, items.map(id));
  return { tuning: items.filter((item) => half.get(id(item)) === "tuning"), "held-out": items.filter((item) => half.get(id(item)) === "held-out") };
}
