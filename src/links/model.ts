/** The link routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH } from "../files/file-fields.ts";
import { Nullable, UuidText } from "../http/shapes.ts";
import { MAX_URL_LENGTH } from "../net/url-policy.ts";

/** Batches are bounded by the tier's batch size; this only stops absurd bodies before they are checked item by item. */
export const MAX_BATCH_BODY_ITEMS = 1000;

const linkFields = {
  url: t.String({ minLength: 1, maxLength: MAX_URL_LENGTH * 2, error: "url: an absolute http(s) URL is required", description: `Absolute http(s) URL, at most ${MAX_URL_LENGTH} characters` }),
  title: t.Optional(Nullable(t.String({ maxLength: MAX_TITLE_LENGTH, error: `title: at most ${MAX_TITLE_LENGTH} characters`, description: "Kept; otherwise the page's own title is used" }))),
  tags: t.Optional(t.Array(t.String({ maxLength: MAX_TAG_LENGTH }), { maxItems: MAX_TAGS, error: `tags: at most ${MAX_TAGS} strings of 1-${MAX_TAG_LENGTH} characters` })),
  project_id: t.Optional(Nullable(UuidText("Project (default: the Default project)"))),
  folder_id: t.Optional(Nullable(UuidText("Folder (its project wins)"))),
  extract_images: t.Optional(t.Boolean({ error: "extract_images: must be true or false", description: "Store the page's main images as image files (default true)" })),
  skip_duplicates: t.Optional(
    t.Boolean({ error: "skip_duplicates: must be true or false", description: "Answer with the organization's existing file for the same page (default true)" }),
  ),
};

export const LinkBody = t.Object(linkFields);

export const BatchResult = t.Object(
  {
    index: t.Integer(),
    url: t.String(),
    status: t.Union([t.Literal("created"), t.Literal("duplicate"), t.Literal("rejected")]),
    file_id: Nullable(t.String({ format: "uuid" })),
    crawl_status: Nullable(t.String()),
    reason: Nullable(t.String()),
    code: Nullable(t.String()),
  },
  { title: "LinkBatchResult" },
);
