/**
 * Turning what the local models found in an image (objects, faces, OCR text, colours, size) into
 * a description, tags and a content category. Without a captioning model this is the
 * description Mediabox gives, and it says only what a detector really reported; the model
 * string records which detectors spoke.
 */
import { type ContentCategory, MAX_TAG_LENGTH, MAX_TAGS } from "../files/file-fields.ts";

export interface ImageFacts {
  width: number;
  height: number;
  format: string;
  objects: { label: string; score: number }[];
  faces: number;
  /** People counted: faces plus person boxes without a face of their own. Absent: count the faces. */
  people?: number;
  ocrLines: string[];
  colours: string[];
}

export const COMPOSED_MODEL = "mediabox-composer (human centernet + blazeface, tesseract eng, colour histogram)";

const PALETTE: [string, [number, number, number]][] = [
  ["black", [20, 20, 20]],
  ["white", [240, 240, 240]],
  ["gray", [128, 128, 128]],
  ["red", [200, 30, 30]],
  ["orange", [240, 140, 20]],
  ["yellow", [235, 220, 40]],
  ["green", [40, 160, 60]],
  ["blue", [40, 80, 200]],
  ["purple", [130, 50, 160]],
  ["pink", [240, 150, 190]],
  ["brown", [130, 80, 40]],
];

/** Named colours covering at least 15% of the pixels, most frequent first (at most three). */
export function dominantColours(rgb: Uint8Array, channels: number): string[] {
  const counts = new Map<string, number>();
  const pixels = Math.floor(rgb.length / channels);
  for (let i = 0; i < pixels; i++) {
    const r = rgb[i * channels]!, g = rgb[i * channels + 1]!, b = rgb[i * channels + 2]!;
    let best = PALETTE[0]![0];
    let bestDistance = Infinity;
    for (const [name, [pr, pg, pb]] of PALETTE) {
      const d = (r - pr) ** 2 + (g - pg) ** 2 + (b - pb) ** 2;
      if (d < bestDistance) [best, bestDistance] = [name, d];
    }
    counts.set(best, (counts.get(best) ?? 0) + 1);
  }
  return [...counts.entries()]
    .filter(([, n]) => n / pixels >= 0.15)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name]) => name);
}

function countPhrase(label: string, n: number): string {
  if (n === 1) return `${/^[aeiou]/.test(label) ? "an" : "a"} ${label}`;
  const plural = label === "person" ? "people" : label.endsWith("s") ? label : `${label}s`;
  return `${n} ${plural}`;
}

function listPhrase(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function orientation(width: number, height: number): string {
  const ratio = width / height;
  if (ratio > 1.1) return "landscape";
  if (ratio < 0.9) return "portrait";
  return "square";
}

export function composeDescription(facts: ImageFacts): string {
  const sentences: string[] = [];
  const shape = `A ${orientation(facts.width, facts.height)} ${facts.format.toUpperCase()} image (${facts.width}×${facts.height})`;
  const people = facts.people ?? facts.faces;
  const subjects = facts.objects.map((o) => o.label === "person" && people > 1 ? countPhrase("person", people) : countPhrase(o.label, 1));
  if (facts.faces > 0 && !facts.objects.some((o) => o.label === "person")) subjects.unshift(countPhrase("face", facts.faces));
  sentences.push(subjects.length ? `${shape} showing ${listPhrase(subjects)}.` : `${shape}; no objects were recognized.`);
  if (facts.colours.length) sentences.push(`Mostly ${listPhrase(facts.colours)}.`);
  const text = facts.ocrLines.join(" ").replace(/\s+/g, " ").trim();
  if (text) sentences.push(`Visible text: "${text.length > 300 ? `${text.slice(0, 297)}...` : text}".`);
  return sentences.join(" ");
}

/** Tags a detector really supports: object labels, "people" for faces, "text" when OCR read some. */
export function factTags(facts: ImageFacts): string[] {
  const tags = facts.objects.map((o) => o.label);
  if (facts.faces > 0 && !tags.includes("person")) tags.push("person");
  if (facts.ocrLines.join("").replace(/\W/g, "").length >= 8) tags.push("text");
  return tags;
}

/** User tags first, then new AI tags; case-insensitive duplicates dropped; spec limits (40 x 50 chars). */
export function mergeTags(userTags: string[], aiTags: string[]): string[] {
  const seen = new Set<string>();
  const merged: string[] = [];
  for (const tag of [...userTags, ...aiTags]) {
    const clean = tag.trim().slice(0, MAX_TAG_LENGTH);
    if (!clean || seen.has(clean.toLowerCase())) continue;
    seen.add(clean.toLowerCase());
    merged.push(clean);
  }
  return merged.slice(0, MAX_TAGS);
}

const INTERIOR = new Set(["bed", "couch", "chair", "dining table", "toilet", "sink", "oven", "refrigerator", "microwave", "potted plant", "tv", "vase"]);
const VEHICLES_AND_MACHINES = new Set(["truck", "car", "train", "boat", "airplane", "bus", "motorcycle"]);

/**
 * Rule-based category from the detectors' evidence, used when the uploader left `general`.
 * Categories no local detector can recognize (blueprint, pid, pfd, ...) stay `general`.
 */
export function categorize(facts: ImageFacts): ContentCategory {
  const words = facts.ocrLines.join(" ").split(/\s+/).filter((w) => /[a-z0-9]{2,}/i.test(w)).length;
  const labels = new Set(facts.objects.map((o) => o.label));
  if (words >= 25 && facts.objects.length === 0) return facts.format === "png" ? "screenshot" : "document";
  if ([...labels].filter((l) => INTERIOR.has(l)).length >= 2) return "real_estate";
  if (facts.objects.length === 1 && facts.faces === 0 && !VEHICLES_AND_MACHINES.has(facts.objects[0]!.label) && facts.colours[0] === "white") {
    return "product_photo";
  }
  return "general";
}

/**
 * What CLIP is shown for each content category ("a photo of …"-style captions work best with
 * CLIP's training text). `general` has prompts too, so everyday photos have somewhere to go.
 */
export const CATEGORY_PROMPTS: Record<ContentCategory, string> = {
  general: "a photo of everyday people, places or things",
  blueprint: "a blueprint with white lines on a blue background",
  ce_plan: "a civil engineering site plan drawing",
  technical_diagram: "a technical diagram with labels and arrows",
  architectural_design: "an architectural floor plan or building design",
  product_photo: "a product photo on a plain white background",
  real_estate: "a real estate photo of a house or a room interior",
  mining: "a photo of a mine, a quarry or mining equipment",
  robotics: "a photo of a robot or a robotic arm",
  artwork: "a painting or a work of art",
  screenshot: "a screenshot of a computer screen",
  document: "a scanned page of a text document",
  map: "a map",
  pid: "a piping and instrumentation diagram",
  pfd: "a process flow diagram of a chemical plant",
  construction: "a photo of a construction site",
  facility_assessment: "a photo of building equipment inspected for a facility assessment",
};

/** CLIP's logit scale: softmax over 100 × cosine turns similarities into probabilities. */
const CLIP_LOGIT_SCALE = 100;
/** Below this probability CLIP's best guess is not trusted and the image stays `general`. */
const MIN_CATEGORY_PROBABILITY = 0.5;

/** The category whose prompt CLIP ranks first, if it is clearly first; `similarities` follow CATEGORY_PROMPTS' order. */
export function categoryFromSimilarities(similarities: number[]): { category: ContentCategory; probability: number } {
  const categories = Object.keys(CATEGORY_PROMPTS) as ContentCategory[];
  const top = Math.max(...similarities);
  const weights = similarities.map((s) => Math.exp(CLIP_LOGIT_SCALE * (s - top)));
  const total = weights.reduce((a, b) => a + b, 0);
  const best = weights.indexOf(Math.max(...weights));
  const probability = weights[best]! / total;
  return { category: probability >= MIN_CATEGORY_PROBABILITY ? categories[best]! : "general", probability };
}
