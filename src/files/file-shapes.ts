/**
 * Response schemas of the File resource: one object per registered media kind (summary and
 * detail), each the common fields plus the kind's own (MediaKind.view; the built-in kinds' are
 * below).
 */
import type { TObject, TProperties, TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { Enum, Nullable, NullableTimestamp, Timestamp } from "../http/shapes.ts";
import { CONTENT_CATEGORIES } from "./file-fields.ts";

/** The path parameter naming a file: `/files/{file_id}/...`. */
export const FileParams = t.Object({ file_id: t.String({ description: "A file UUID or its first 8 hexadecimal characters" }) });

const NullableString = Nullable(t.String());
const NullableNumber = Nullable(t.Number());
const NullableInteger = Nullable(t.Integer());

const common = (mediaType: string) => ({
  id: t.String({ format: "uuid" }),
  media_type: t.Literal(mediaType),
  title: NullableString,
  filename: t.String(),
  tags: t.Array(t.String()),
  size_bytes: t.Integer(),
  content_type: t.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  content_created_at: NullableTimestamp,
  user_description: NullableString,
  upload_description: NullableString,
  visible_text: NullableString,
  source_url: NullableString,
  content_category: Enum(CONTENT_CATEGORIES),
  project_id: t.String({ format: "uuid" }),
  folder_id: Nullable(t.String({ format: "uuid" })),
  processing_status: Enum(["queued", "processing", "stored", "completed", "failed"], { description: "Extension: the file's processing as a whole (failed: see processing_error; POST /files/{id}/reprocess runs it again)" }),
  processing_error: Nullable(t.String({ description: "Extension: why processing failed, or the warnings of stages that failed while the file completed" })),
});

/** The image kind's fields (summary and detail). */
export const IMAGE_FIELDS = {
  dimensions: Nullable(t.Object({ width: t.Integer(), height: t.Integer() })),
  format: NullableString,
  thumbnail_url: NullableString,
  medium_url: NullableString,
  full_url: NullableString,
  original_url: NullableString,
  variant_status: NullableString,
  variant_count: t.Integer(),
  blur_hash: NullableString,
  description_status: NullableString,
  description_error: NullableString,
  description_generated_at: NullableTimestamp,
  compliance_status: NullableString,
  has_full_description: t.Boolean(),
  similar_available: t.Optional(t.Boolean({ description: "Extension: the file has its embedding, so GET /files/{id}/similar answers (409 EMBEDDING_NOT_READY before)" })),
};

const BoundingBox = t.Object({ x_min: t.Number(), y_min: t.Number(), x_max: t.Number(), y_max: t.Number() }, { description: "Normalized 0-1" });

export const TextRegion = t.Object(
  { text: t.String(), bounding_box: BoundingBox, confidence: t.Optional(t.Number({ description: "OCR confidence 0-1" })) },
  { title: "TextRegion" },
);

export const FullDescription = t.Object(
  {
    id: t.String(),
    model: t.String({ description: "The model (or composer with the detectors it used) that wrote the text" }),
    kind: Enum(["caption", "summary"], { description: "caption: from a captioning model or vision endpoint; summary: composed from detector findings" }),
    text: t.String(),
    created_at: Timestamp,
  },
  { title: "FullDescription" },
);

export const ExtractionView = t.Object(
  {
    domain: t.String(),
    source: t.String({ description: "What produced the data" }),
    data: t.Unknown({ description: "The original result, never changed by reviews" }),
    corrections: t.Object({ item_reviews: t.Record(t.String(), t.String()), field_edits: t.Record(t.String(), t.Unknown()) }),
    corrected: t.Unknown({ description: "data with the corrections applied" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    reviewed_at: NullableTimestamp,
  },
  { title: "Extraction" },
);

export const FormattedDocument = t.Object(
  {
    format: t.Literal("markdown"),
    content: t.String({ description: "Markdown: title, description, tags, visible text, extractions" }),
    generated_at: Timestamp,
  },
  { title: "FormattedDocument" },
);

const imageDetail = {
  text_regions: t.Array(TextRegion),
  full_descriptions: t.Array(FullDescription),
  extractions: t.Array(ExtractionView),
  formatted_document: t.Optional(FormattedDocument),
};

export const DOCUMENT_FIELDS = {
  document_type: NullableString,
  page_count: NullableInteger,
  chunk_count: t.Integer(),
  text_extraction_status: NullableString,
  document_url: NullableString,
};

export const VIDEO_FIELDS = {
  duration_seconds: NullableNumber,
  frame_rate: NullableNumber,
  video_codec: NullableString,
  resolution: NullableString,
  analysis_status: t.Union([t.Literal("pending"), t.Literal("processing"), t.Literal("completed"), t.Literal("failed"), t.Literal("skipped"), t.Null()], {
    description: "skipped: over MEDIABOX_VIDEO_MAX_DURATION_SECONDS or MEDIABOX_VIDEO_MAX_MB (analysis_error says which)",
  }),
  analysis_error: t.Optional(NullableString),
  thumbnail_url: t.Optional(t.Union([t.String(), t.Null()], { description: "Extension: the poster frame's small_256 variant" })),
  medium_url: t.Optional(t.Union([t.String(), t.Null()], { description: "Extension: the poster frame's medium_750 variant" })),
  full_url: t.Optional(t.Union([t.String(), t.Null()], { description: "Extension: the poster frame's large_1024 variant" })),
  blur_hash: t.Optional(NullableString),
  video_url: t.Optional(t.Union([t.String(), t.Null()], { description: "Extension: signed URL of the original; supports HTTP Range for seeking" })),
  container: t.Optional(NullableString),
  has_audio: t.Optional(t.Union([t.Boolean(), t.Null()])),
  bit_rate: t.Optional(NullableInteger),
  description_status: t.Optional(NullableString),
  description_error: t.Optional(NullableString),
  similar_available: t.Optional(t.Boolean({ description: "Extension: the file has its embedding, so GET /files/{id}/similar answers (409 EMBEDDING_NOT_READY before)" })),
};

const Keyframe = t.Object(
  {
    index: t.Integer(),
    time_seconds: t.Number({ description: "Seconds from the start of the video" }),
    width: t.Integer(),
    height: t.Integer(),
    is_poster: t.Boolean(),
    url: t.String({ description: "Signed URL of the frame (JPEG)" }),
    visible_text: NullableString,
    objects: t.Union([t.Array(t.Object({ label: t.String(), score: t.Number() })), t.Null()], { description: "Null when the detectors did not look at this frame" }),
    faces: NullableInteger,
  },
  { title: "VideoKeyframe" },
);

/** Extension: what the camera recorded (EXIF/XMP for photos, QuickTime/MP4 tags for videos). */
export const CameraView = t.Object(
  {
    make: NullableString,
    model: NullableString,
    lens: NullableString,
    focal_length_mm: NullableNumber,
    focal_length_35mm: t.Union([t.Number(), t.Null()], { description: "35 mm-equivalent focal length" }),
    f_number: NullableNumber,
    exposure_time_seconds: NullableNumber,
    iso: NullableInteger,
    orientation: t.Union([t.Integer(), t.Null()], { description: "EXIF orientation 1-8 (photos)" }),
    taken_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "The capture instant (UTC) the camera recorded" }),
    taken_at_offset: t.Union([t.String(), t.Null()], { description: "The local UTC offset it was taken at (\"+02:00\"); null when the file does not say" }),
    taken_at_source: t.Union([t.String(), t.Null()], { description: "The field the date came from (\"EXIF DateTimeOriginal\", \"QuickTime creationdate\", ...)" }),
  },
  { title: "CameraFacts" },
);

/** Extension: where it was taken, and the place named by the offline gazetteer. */
export const LocationView = t.Object(
  {
    latitude: t.Number({ minimum: -90, maximum: 90 }),
    longitude: t.Number({ minimum: -180, maximum: 180 }),
    altitude_m: NullableNumber,
    country_code: t.Union([t.String(), t.Null()], { description: "ISO 3166-1 alpha-2" }),
    country: NullableString,
    region: t.Union([t.String(), t.Null()], { description: "First-order division (state, province, region)" }),
    city: t.Union([t.String(), t.Null()], { description: "The nearest populated place within 25 km (GeoNames; may be a district of a large city)" }),
  },
  { title: "Location" },
);

const cameraDetail = {
  camera: t.Union([CameraView, t.Null()], { description: "Extension: null when the file records no camera facts" }),
  location: t.Union([LocationView, t.Null()], { description: "Extension: null when the file records no position" }),
};

const videoDetail = {
  keyframes: t.Array(Keyframe, { description: "Extension: the sampled keyframes in time order" }),
  text_regions: t.Array(t.Unknown(), { description: "OCR lines of the keyframes, each with its time_seconds" }),
  full_descriptions: t.Array(FullDescription),
  extractions: t.Array(ExtractionView),
};

export const ExtractedImage = t.Object(
  {
    id: t.String({ format: "uuid", description: "The image file" }),
    source_url: t.String({ description: "Where the page showed it" }),
    thumbnail_url: NullableString,
    medium_url: NullableString,
    variant_status: NullableString,
  },
  { title: "ExtractedImage" },
);

export const LINK_FIELDS = {
  domain: NullableString,
  og_metadata: Nullable(t.Record(t.String(), t.Unknown(), { description: "og:*, twitter:*, article:* tags as written, json_ld, and final_url, canonical_url, site_name, author, published_at, language, charset, truncated" })),
  favicon_url: Nullable(t.String({ description: "Signed URL of the stored icon (valid 1 hour)" })),
  crawl_status: Nullable(Enum(["pending", "crawling", "completed", "failed", "blocked"])),
  crawl_error: Nullable(t.String({ description: "Extension: why the crawl failed or was blocked" })),
  crawled_at: Nullable(t.String({ format: "date-time", description: "Extension: when the page was last read" })),
  snapshot_available: t.Boolean({ description: "Extension: GET /files/{id}/snapshot serves the offline copy" }),
  extracted_images: t.Array(ExtractedImage),
  extracted_images_count: t.Integer(),
  thumbnail_url: t.Optional(t.Union([t.String(), t.Null()], { description: "Extension: the small_256 variant of the page's first image (its og:image when it has one)" })),
};

export const IMAGE_DETAIL_FIELDS = { ...imageDetail, ...cameraDetail };
export const VIDEO_DETAIL_FIELDS = { ...videoDetail, ...cameraDetail };
export const DOCUMENT_DETAIL_FIELDS = {
  extracted_text: NullableString,
  suggested_tags: t.Optional(t.Array(t.String(), { description: "Extension: keyphrases of the summary offered as tags (not applied): PATCH tags to accept, DELETE /files/{id}/suggested-tags/{tag} to dismiss" })),
  extractions: t.Optional(t.Array(ExtractionView, { description: "Extension: stored extractions (a custom schema a rule ran on the document)" })),
};
export const LINK_DETAIL_FIELDS = {
  extractions: t.Optional(t.Array(ExtractionView, { description: "Extension: stored extractions (a custom schema a rule ran on the page)" })),
};

const variant = (title: string, props: TProperties) => t.Object(props, { title });

/** Only with GET /files?visible_text_chars= (an extension). */
const listing = {
  visible_text_truncated: t.Optional(t.Boolean({ description: "Extension, with visible_text_chars: true when visible_text was cut" })),
};

/** Extension: what the trash adds to a file's summary. */
const trashed = {
  deleted_at: Timestamp,
  purge_at: t.String({ format: "date-time", description: "When the file is removed for good (deleted_at + 30 days); it can be restored until then" }),
};

/** What a kind gives the File resource's schemas (MediaKind's type and view). */
export interface KindShape {
  type: string;
  view: { summaryFields: TProperties; detailFields: TProperties };
}

/** "image" -> "Image": the schemas' titles (ImageFileSummary, ImageFile, ...). */
const titled = (type: string) => type.charAt(0).toUpperCase() + type.slice(1);

/**
 * The File resource's schemas for these kinds: a union with one object per kind. Their static
 * type is open (the kinds are known when the server is composed); the views' own types check the
 * bodies, and the schemas check them again when the routes answer.
 */
export function fileShapes(kinds: KindShape[]) {
  const each = (make: (kind: KindShape) => TObject): TSchema => t.Union(kinds.map(make));
  return {
    FileSummary: each((k) => variant(`${titled(k.type)}FileSummary`, { ...common(k.type), ...k.view.summaryFields, ...listing })),
    DeletedFileSummary: each((k) => variant(`Deleted${titled(k.type)}FileSummary`, { ...common(k.type), ...k.view.summaryFields, ...trashed })),
    FileDetail: each((k) => variant(`${titled(k.type)}File`, { ...common(k.type), ...k.view.summaryFields, ...k.view.detailFields })),
  };
}
