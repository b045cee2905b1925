/**
 * Listing-photo compliance (upload fields compliance_type / compliance_standard /
 * compliance_image_type): the registry of standards Mediabox knows, each a table of rules that
 * can be checked from what the image pipeline already measures (pixel size, byte size, format,
 * OCR regions, the colour of the outer frame), and the evaluation of one image against one
 * standard. Deciding when to evaluate and storing the result is the pipeline's job.
 *
 * The thresholds are Mediabox's defaults, modeled on the public photo guidance of each MLS or
 * marketplace. They are not official certifications: a listing service can tighten its rules at
 * any time, and a "pass" here means only that none of these locally checkable rules failed.
 *
 * The rule table is plain data (COMPLIANCE_STANDARDS) so the table in docs/images.md is generated from the
 * same source the evaluator reads (complianceRulesMarkdown).
 */
import { formatBytes } from "../byte-sizes.ts";

export const COMPLIANCE_TYPES = ["mls", "marketplace"] as const;
export type ComplianceType = (typeof COMPLIANCE_TYPES)[number];

export const COMPLIANCE_IMAGE_TYPES = ["main", "secondary"] as const;
export type ComplianceImageType = (typeof COMPLIANCE_IMAGE_TYPES)[number];

/**
 * A "required" rule decides pass/fail; a "recommended" one is reported but never fails the
 * image, because the listing service accepts such photos and only ranks or zooms them worse.
 */
export type RuleLevel = "required" | "recommended";

/** What a rule measures and its threshold. Side lengths ignore orientation unless stated. */
export type RuleCheck =
  /** Longest side >= long, shortest side >= short (a 768x1024 portrait meets 1024x768). */
  | { check: "min_dimensions"; long: number; short: number }
  | { check: "min_longest_side"; px: number }
  | { check: "min_shortest_side"; px: number }
  | { check: "min_width"; px: number }
  | { check: "max_megapixels"; megapixels: number }
  /** Longest side divided by shortest side, so it holds for portrait and landscape alike. */
  | { check: "aspect_ratio"; min: number; max: number }
  | { check: "max_file_size"; bytes: number }
  | { check: "format"; allowed: readonly string[] }
  | { check: "landscape" }
  /** Any OCR region with at least minChars letters or digits counts as overlaid text. */
  | { check: "no_text_overlay"; minChars: number }
  /** Every channel of the frame's mean colour >= minChannel, and the frame is nearly uniform. */
  | { check: "white_background"; minChannel: number; maxStdDev: number };

export type ComplianceRule = RuleCheck & {
  /** Names the rule in results; unique among the rules that apply to one image type. */
  id: string;
  level: RuleLevel;
  appliesTo: readonly ComplianceImageType[];
};

export interface ComplianceStandard {
  id: string;
  type: ComplianceType;
  name: string;
  /** The public guidance the defaults are modeled on. */
  basis: string;
  rules: readonly ComplianceRule[];
}

const MB = 1024 * 1024;
const BOTH: readonly ComplianceImageType[] = ["main", "secondary"];
const MAIN: readonly ComplianceImageType[] = ["main"];
const SECONDARY: readonly ComplianceImageType[] = ["secondary"];

/** Three characters: a stray "A" or "12" read off a texture is noise, "MLS" or "©JD" is not. */
const OVERLAY_MIN_CHARS = 3;
// JPEG ringing and sensor noise keep a studio-white frame a few levels below 255.
const WHITE = { minChannel: 245, maxStdDev: 8 } as const;

/** A rule named after its check (most are): required unless said. */
const rule = (appliesTo: readonly ComplianceImageType[], check: RuleCheck): ComplianceRule => ({ id: check.check, level: "required", appliesTo, ...check });
/** A recommended rule, named apart from the required one of the same check. */
const recommended = (id: string, appliesTo: readonly ComplianceImageType[], check: RuleCheck): ComplianceRule => ({ id, level: "recommended", appliesTo, ...check });

// The checks nearly every standard makes, with its own thresholds.
const maxFileSize = (mb: number) => rule(BOTH, { check: "max_file_size", bytes: mb * MB });
const formats = (...allowed: string[]) => rule(BOTH, { check: "format", allowed });
const noTextOverlay = (appliesTo: readonly ComplianceImageType[]) => rule(appliesTo, { check: "no_text_overlay", minChars: OVERLAY_MIN_CHARS });
const LANDSCAPE_MAIN = rule(MAIN, { check: "landscape" });

export const COMPLIANCE_STANDARDS: readonly ComplianceStandard[] = [
  {
    id: "reso",
    type: "mls",
    name: "Generic MLS (RESO-style)",
    basis: "common MLS photo policies: large landscape photos, no branding or text on any photo",
    rules: [
      rule(BOTH, { check: "min_dimensions", long: 1024, short: 768 }),
      rule(BOTH, { check: "aspect_ratio", min: 1.2, max: 1.8 }),
      maxFileSize(25),
      formats("jpeg", "png"),
      noTextOverlay(BOTH),
      LANDSCAPE_MAIN,
    ],
  },
  {
    id: "crmls",
    type: "mls",
    name: "CRMLS",
    basis: "California Regional MLS photo rules: larger primary photo, no text or watermarks",
    rules: [
      rule(MAIN, { check: "min_dimensions", long: 1280, short: 960 }),
      rule(SECONDARY, { check: "min_dimensions", long: 640, short: 480 }),
      maxFileSize(20),
      formats("jpeg", "png"),
      noTextOverlay(BOTH),
      LANDSCAPE_MAIN,
    ],
  },
  {
    id: "bright",
    type: "mls",
    name: "Bright MLS",
    basis: "Bright MLS photo guidance: 3:2 or wider landscape photos, no branding",
    rules: [
      rule(BOTH, { check: "min_dimensions", long: 1024, short: 683 }),
      maxFileSize(15),
      formats("jpeg"),
      noTextOverlay(BOTH),
      LANDSCAPE_MAIN,
    ],
  },
  {
    id: "amazon",
    type: "marketplace",
    name: "Amazon",
    basis: "Amazon product image requirements: zoomable main image on pure white, no text on the main image",
    rules: [
      rule(MAIN, { check: "min_longest_side", px: 1000 }),
      rule(SECONDARY, { check: "min_longest_side", px: 500 }),
      maxFileSize(10),
      formats("jpeg", "png", "gif", "tiff"),
      noTextOverlay(MAIN),
      rule(MAIN, { check: "white_background", ...WHITE }),
    ],
  },
  {
    id: "ebay",
    type: "marketplace",
    name: "eBay",
    basis: "eBay picture policy: at least 500 px, 1600 px recommended, no added text, watermarks or borders",
    rules: [
      rule(BOTH, { check: "min_longest_side", px: 500 }),
      recommended("recommended_longest_side", BOTH, { check: "min_longest_side", px: 1600 }),
      maxFileSize(12),
      formats("jpeg", "png", "gif", "tiff", "bmp", "webp", "heic", "avif"),
      noTextOverlay(BOTH),
    ],
  },
  {
    id: "etsy",
    type: "marketplace",
    name: "Etsy",
    basis: "Etsy listing photo tips: at least 635 px wide, 2000 px recommended, 4:3 thumbnails",
    rules: [
      rule(BOTH, { check: "min_width", px: 635 }),
      recommended("recommended_shortest_side", BOTH, { check: "min_shortest_side", px: 2000 }),
      recommended("recommended_aspect_ratio", MAIN, { check: "aspect_ratio", min: 1.25, max: 1.4 }),
      maxFileSize(10),
      formats("jpeg", "png", "gif"),
    ],
  },
  {
    id: "shopify",
    type: "marketplace",
    name: "Shopify",
    basis: "Shopify product media limits: under 20 MB and 20 megapixels, square 2048 px recommended",
    rules: [
      maxFileSize(20),
      rule(BOTH, { check: "max_megapixels", megapixels: 20 }),
      formats("jpeg", "png", "webp", "heic", "gif"),
      recommended("recommended_shortest_side", MAIN, { check: "min_shortest_side", px: 2048 }),
      recommended("recommended_aspect_ratio", MAIN, { check: "aspect_ratio", min: 1, max: 1.05 }),
    ],
  },
  {
    id: "generic",
    type: "marketplace",
    name: "Generic marketplace",
    basis: "the common ground of the marketplaces above, for shops without their own rules",
    rules: [
      rule(BOTH, { check: "min_longest_side", px: 800 }),
      maxFileSize(10),
      formats("jpeg", "png", "webp"),
      noTextOverlay(MAIN),
    ],
  },
];

// Standards are named case-insensitively: "CRMLS" from a form is the same standard as "crmls".
function findStandard(type: string, standard: string): ComplianceStandard | undefined {
  const id = standard.trim().toLowerCase();
  return COMPLIANCE_STANDARDS.find((s) => s.type === type && s.id === id);
}

export function isKnownStandard(type: string, standard: string): boolean {
  return findStandard(type, standard) !== undefined;
}

/** The standard ids of a compliance type, for the 400 that refuses an unknown one. */
export function knownStandards(type: string): string[] {
  return COMPLIANCE_STANDARDS.filter((s) => s.type === type).map((s) => s.id);
}

export interface OcrRegion {
  text: string;
  bounding_box: { x_min: number; y_min: number; x_max: number; y_max: number };
}

export interface ComplianceInput {
  standard: string;
  type: ComplianceType;
  imageType?: ComplianceImageType;
  width: number;
  height: number;
  sizeBytes: number;
  /** As the image pipeline names it ("jpeg", "png", …); a MIME type or "jpg" is accepted too. */
  format: string | null;
  ocrRegions: readonly OcrRegion[];
  /** Mean sRGB colour of the outer 5% frame. */
  borderMeanRgb?: readonly [number, number, number];
  /** Spread of the frame's channel values. */
  borderStdDev?: number;
}

export interface ComplianceCheck {
  rule: string;
  level: RuleLevel;
  passed: boolean;
  detail: string;
  measured?: unknown;
  required?: unknown;
}

export interface ComplianceResult {
  standard: string;
  type: ComplianceType;
  image_type: ComplianceImageType;
  status: "pass" | "fail";
  checks: ComplianceCheck[];
}

/** Throws a plain Error for an unknown standard: upload validation must have refused it. */
export function evaluateCompliance(input: ComplianceInput): ComplianceResult {
  const standard = findStandard(input.type, input.standard);
  if (!standard) {
    throw new Error(`unknown ${input.type} compliance standard "${input.standard}" (known: ${knownStandards(input.type).join(", ")})`);
  }
  const imageType = input.imageType ?? "main";
  const checks = standard.rules.filter((r) => r.appliesTo.includes(imageType)).map((r) => evaluateRule(r, input));
  const failed = checks.some((c) => !c.passed && c.level === "required");
  return { standard: standard.id, type: standard.type, image_type: imageType, status: failed ? "fail" : "pass", checks };
}

function evaluateRule(rule: ComplianceRule, input: ComplianceInput): ComplianceCheck {
  const outcome = measure(rule, input);
  return { rule: rule.id, level: rule.level, ...outcome };
}

type Outcome = Omit<ComplianceCheck, "rule" | "level">;

const sides = (input: ComplianceInput) => ({
  long: Math.max(input.width, input.height),
  short: Math.min(input.width, input.height),
});

function measure(rule: RuleCheck, input: ComplianceInput): Outcome {
  const { long, short } = sides(input);
  const size = `${input.width}x${input.height} px`;
  switch (rule.check) {
    case "min_dimensions": {
      const passed = long >= rule.long && short >= rule.short;
      return { passed, detail: `${size}; needs at least ${rule.long}x${rule.short} px`, measured: { width: input.width, height: input.height }, required: { long: rule.long, short: rule.short } };
    }
    case "min_longest_side":
      return atLeast(long, rule.px, `longest side ${long} px; needs at least ${rule.px} px`);
    case "min_shortest_side":
      return atLeast(short, rule.px, `shortest side ${short} px; needs at least ${rule.px} px`);
    case "min_width":
      return atLeast(input.width, rule.px, `width ${input.width} px; needs at least ${rule.px} px`);
    case "max_megapixels": {
      const mp = round((input.width * input.height) / 1e6, 2);
      return { passed: mp <= rule.megapixels, detail: `${mp} megapixels; at most ${rule.megapixels} allowed`, measured: mp, required: { max: rule.megapixels } };
    }
    case "aspect_ratio": {
      const ratio = short > 0 ? round(long / short, 3) : 0;
      const passed = ratio >= rule.min && ratio <= rule.max;
      return { passed, detail: `aspect ratio ${ratio}:1 (long:short); must be between ${rule.min} and ${rule.max}`, measured: ratio, required: { min: rule.min, max: rule.max } };
    }
    case "max_file_size": {
      const passed = input.sizeBytes <= rule.bytes;
      return { passed, detail: `${formatBytes(input.sizeBytes)}; at most ${formatBytes(rule.bytes)} allowed`, measured: input.sizeBytes, required: { max: rule.bytes } };
    }
    case "format":
      return formatOutcome(input.format, rule.allowed);
    case "landscape": {
      const passed = input.width > input.height;
      return { passed, detail: passed ? `${size} is landscape` : `${size} is not landscape; the main photo must be wider than tall`, measured: { width: input.width, height: input.height } };
    }
    case "no_text_overlay":
      return overlayOutcome(input.ocrRegions, rule.minChars);
    case "white_background":
      return whiteOutcome(input, rule.minChannel, rule.maxStdDev);
  }
}

function atLeast(value: number, min: number, detail: string): Outcome {
  return { passed: value >= min, detail, measured: value, required: { min } };
}

// "jpg", "image/jpeg" and "JPEG" all name one format; the pipeline's "tif" too.
const FORMAT_ALIASES: Record<string, string> = { jpg: "jpeg", pjpeg: "jpeg", tif: "tiff", heif: "heic" };

function normalizeFormat(format: string): string {
  const bare = format.trim().toLowerCase().replace(/^image\//, "").replace(/^x-/, "");
  return FORMAT_ALIASES[bare] ?? bare;
}

function formatOutcome(format: string | null, allowed: readonly string[]): Outcome {
  const required = { allowed: [...allowed] };
  if (!format) return { passed: false, detail: `format unknown; must be one of ${allowed.join(", ")}`, measured: null, required };
  const name = normalizeFormat(format);
  const passed = allowed.includes(name);
  return { passed, detail: passed ? `${name} is accepted` : `${name} is not accepted; must be one of ${allowed.join(", ")}`, measured: name, required };
}

// OCR cannot tell a watermark from a street sign in the scene, so every legible text counts and
// is reported: a reviewer can see at once whether it was overlaid or photographed.
function overlayOutcome(regions: readonly OcrRegion[], minChars: number): Outcome {
  const texts = regions.map((r) => r.text.trim()).filter((t) => (t.match(/[\p{L}\p{N}]/gu) ?? []).length >= minChars);
  const required = { max_text_regions: 0 };
  if (texts.length === 0) return { passed: true, detail: "no overlaid text or watermark found", measured: [], required };
  const quoted = texts.slice(0, 5).map((t) => JSON.stringify(t)).join(", ");
  const more = texts.length > 5 ? ` and ${texts.length - 5} more` : "";
  return { passed: false, detail: `text found on the photo (overlay or watermark): ${quoted}${more}`, measured: texts, required };
}

function whiteOutcome(input: ComplianceInput, minChannel: number, maxStdDev: number): Outcome {
  const required = { min_channel: minChannel, max_std_dev: maxStdDev };
  const mean = input.borderMeanRgb;
  // Without a measurement the photo cannot be shown to comply; failing says so instead of guessing.
  if (!mean) return { passed: false, detail: "background colour was not measured", measured: null, required };
  const stdDev = input.borderStdDev ?? 0;
  const white = mean.every((c) => c >= minChannel);
  const uniform = stdDev <= maxStdDev;
  const rgb = `rgb(${mean.map((c) => Math.round(c)).join(", ")})`;
  let detail = `background ${rgb} is pure white`;
  if (!white) detail = `background ${rgb} is not pure white; every channel must be at least ${minChannel}`;
  else if (!uniform) detail = `background ${rgb} is uneven (spread ${stdDev}); at most ${maxStdDev} allowed`;
  return { passed: white && uniform, detail, measured: { mean_rgb: [...mean], std_dev: stdDev }, required };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** One sentence per rule, as docs/images.md states it. */
export function describeRule(rule: ComplianceRule): string {
  const text = ruleText(rule);
  const scope = rule.appliesTo.length === 2 ? "all photos" : `${rule.appliesTo[0]} photo only`;
  return `${text} (${scope}${rule.level === "recommended" ? ", recommended" : ""})`;
}

function ruleText(rule: RuleCheck): string {
  switch (rule.check) {
    case "min_dimensions":
      return `at least ${rule.long}x${rule.short} px (either orientation)`;
    case "min_longest_side":
      return `longest side at least ${rule.px} px`;
    case "min_shortest_side":
      return `shortest side at least ${rule.px} px`;
    case "min_width":
      return `at least ${rule.px} px wide`;
    case "max_megapixels":
      return `at most ${rule.megapixels} megapixels`;
    case "aspect_ratio":
      return `aspect ratio (long:short) between ${rule.min} and ${rule.max}`;
    case "max_file_size":
      return `at most ${formatBytes(rule.bytes)}`;
    case "format":
      return `format ${rule.allowed.join(", ")}`;
    case "landscape":
      return "landscape orientation";
    case "no_text_overlay":
      return `no overlaid text or watermark (OCR text of ${rule.minChars}+ letters or digits)`;
    case "white_background":
      return `pure white background (outer frame: every channel >= ${rule.minChannel}, spread <= ${rule.maxStdDev})`;
  }
}

/** The table of standards in docs/images.md, generated from COMPLIANCE_STANDARDS. */
export function complianceRulesMarkdown(): string {
  const rows = COMPLIANCE_STANDARDS.map(
    (s) => `| \`${s.type}\` | \`${s.id}\` | ${s.name} | ${s.rules.map(describeRule).join("; ")} |`,
  );
  return ["| Type | Standard | Name | Rules |", "|---|---|---|---|", ...rows].join("\n");
}
