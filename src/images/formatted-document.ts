/**
 * The `formatted_document` of GET /files/{id}?format=markdown: one Markdown text that puts an
 * image's description, tags, visible text and (reviewed) extractions together, for pasting into
 * notes or feeding to a language model.
 */
import type { Extraction } from "../extractions/extractions.ts";

export interface ImageForMarkdown {
  title: string | null;
  filename: string;
  dimensions: { width: number; height: number } | null;
  format: string | null;
  content_category: string;
  tags: string[];
  user_description: string | null;
  upload_description: string | null;
  visible_text: string | null;
  extractions: Extraction[];
}

const fence = (text: string, lang = "") => `\`\`\`${lang}\n${text.replaceAll("```", "`\u200b``")}\n\`\`\``;

function extractionSection(extraction: Extraction): string {
  const corrected = extraction.corrected as Record<string, unknown> | null;
  if (extraction.domain === "mls_compliance" && corrected && Array.isArray(corrected.checks)) {
    const rows = (corrected.checks as { rule: string; passed: boolean; detail: string }[]).map(
      (c) => `| ${c.rule} | ${c.passed ? "pass" : "fail"} | ${c.detail.replaceAll("|", "\\|")} |`,
    );
    return [`### Compliance: ${String(corrected.standard)} (${String(corrected.status)})`, "", "| rule | result | detail |", "|---|---|---|", ...rows].join("\n");
  }
  if (extraction.domain === "text_regions") return ""; // already shown as visible text
  const value = extraction.domain === "custom_schema" && corrected ? (corrected.value ?? corrected) : corrected;
  const name = extraction.domain === "custom_schema" && corrected?.schema_name ? `Custom schema: ${String(corrected.schema_name)}` : extraction.domain;
  return `### ${name}\n\n${fence(JSON.stringify(value, null, 2), "json")}`;
}

export function imageMarkdown(image: ImageForMarkdown, generatedAt: string) {
  const parts = [`# ${image.title ?? image.filename}`];
  const facts = [
    image.dimensions ? `${image.dimensions.width}×${image.dimensions.height}` : null,
    image.format,
    image.content_category !== "general" ? image.content_category : null,
  ].filter(Boolean);
  if (facts.length) parts.push(`*${facts.join(" · ")}*`);
  const description = image.user_description ?? image.upload_description;
  if (description) parts.push(`## Description\n\n${description}`);
  if (image.tags.length) parts.push(`## Tags\n\n${image.tags.map((t) => `\`${t}\``).join(" ")}`);
  if (image.visible_text) parts.push(`## Visible text\n\n${fence(image.visible_text)}`);
  const sections = image.extractions.map(extractionSection).filter(Boolean);
  if (sections.length) parts.push(`## Extractions\n\n${sections.join("\n\n")}`);
  return { format: "markdown" as const, content: `${parts.join("\n\n")}\n`, generated_at: generatedAt };
}
