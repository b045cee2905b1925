/** The image routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { TextRegion } from "../files/file-shapes.ts";
import { VARIANT_TYPES } from "../files/variants.ts";
import { Enum, Nullable, Timestamp } from "../http/shapes.ts";

const VARIANT_CHOICES = ["original", ...VARIANT_TYPES] as const;

export const AnalyzeResult = t.Object(
  {
    image_id: t.String({ format: "uuid" }),
    status: Enum(["completed", "processing", "failed", "skipped"], {
      description: "completed: processed (see description_status); processing: still running after the timeout; failed: the image could not be processed; skipped: duplicate of image_id",
    }),
    job_id: Nullable(t.String({ format: "uuid" })),
    poll_url: Nullable(t.String()),
    processing_time_ms: t.Number(),
    description: Nullable(t.String()),
    description_status: Nullable(t.String()),
    description_error: Nullable(t.String()),
    tags: t.Array(t.String()),
    visible_text: Nullable(t.String()),
    text_regions: t.Array(TextRegion),
    content_category: t.String(),
    dimensions: Nullable(t.Object({ width: t.Integer(), height: t.Integer() })),
    error: Nullable(t.String()),
  },
  { title: "ImageAnalyzeResult" },
);

export const VariantParams = t.Object({
  file_id: t.String(),
  variant_type: Enum(VARIANT_CHOICES, { error: `variant_type: must be one of ${VARIANT_CHOICES.join(", ")}` }),
});

export const VariantsTriggered = t.Object({
  success: t.Boolean(),
  message: t.String(),
  task_id: t.String({ format: "uuid", description: "Job id; poll GET /job/{task_id}" }),
  current_status: t.String(),
  image_id: t.String({ format: "uuid" }),
  skipped_duplicate: t.Optional(t.Boolean()),
});

export const ReviewParams = t.Object({ file_id: t.String(), domain_name: t.String() });

export const ReviewResult = t.Object({
  image_id: t.String({ format: "uuid" }),
  domain_name: t.String(),
  corrections: t.Object({ item_reviews: t.Record(t.String(), t.String()), field_edits: t.Record(t.String(), t.Unknown()) }),
  updated_at: Timestamp,
});

export const AnalyzeAccepted = t.Object({
  job_id: t.String({ format: "uuid" }),
  image_id: t.String({ format: "uuid" }),
  status: Enum(["pending", "skipped"], { description: "skipped: duplicate; job_id is the existing image's processing job" }),
  poll_url: t.String(),
});
