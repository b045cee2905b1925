/**
 * The fields a person sets on a file (title, tags, content category): their words and limits, and
 * the one parser of tags. Uploads, edits, rules, links and mail intake all read them here.
 */
import { badRequest } from "../errors.ts";

export const CONTENT_CATEGORIES = [
  "general", "blueprint", "ce_plan", "technical_diagram", "architectural_design", "product_photo", "real_estate",
  "mining", "robotics", "artwork", "screenshot", "document", "map", "pid", "pfd", "construction", "facility_assessment",
] as const;
export type ContentCategory = (typeof CONTENT_CATEGORIES)[number];

export const MAX_TAGS = 40;
export const MAX_TAG_LENGTH = 50;
export const MAX_TITLE_LENGTH = 255;

/** Tags: a comma-separated string (forms) or an array (JSON); trimmed, de-duplicated, bounded. */
export function parseTags(value: unknown, limits: { maxTags: number; field?: string } = { maxTags: MAX_TAGS }): string[] {
  const field = limits.field ?? "tags";
  if (value === undefined || value === null || value === "") return [];
  let list: unknown[];
  if (typeof value === "string") list = value.split(",");
  else if (Array.isArray(value)) list = value;
  else throw badRequest(`${field}: must be a comma-separated string or an array of strings`);
  const tags: string[] = [];
  for (const item of list) {
    if (typeof item !== "string") throw badRequest(`${field}: every tag must be a string`);
    const tag = item.trim();
    if (!tag) {
      if (Array.isArray(value)) throw badRequest(`${field}: tags must be 1-${MAX_TAG_LENGTH} characters`);
      continue;
    }
    if (tag.length > MAX_TAG_LENGTH) throw badRequest(`${field}: tag "${tag.slice(0, 20)}…" is longer than ${MAX_TAG_LENGTH} characters`);
    if (!tags.includes(tag)) tags.push(tag);
  }
  if (tags.length > limits.maxTags) throw badRequest(`${field}: at most ${limits.maxTags} tags (got ${tags.length})`);
  return tags;
}
