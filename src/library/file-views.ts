/**
 * The File resource as the API shows it: the common fields plus the fields of the file's media
 * type only (spec: "media-specific fields appear only on the matching variant"), which the
 * file's kind gives (MediaKind.view). Fields that processing has not filled yet are null, never
 * missing. Summaries (listing) leave out the heavy detail-only fields: extracted_text,
 * text_regions and full_descriptions.
 */
import type { FileUrls } from "../files/file-urls.ts";
import type { FileRow } from "../files/file.ts";
import { commonFields } from "../files/file-view.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";

export async function fileSummary(kinds: MediaKinds, row: FileRow, urls: FileUrls) {
  return { ...commonFields(row), ...(await kinds.of(row).view.summary(row, urls)) };
}

/**
 * A summary whose visible_text is cut to `chars` characters, with `visible_text_truncated`
 * saying whether anything was left out (GET /files?visible_text_chars=, an extension): a page of
 * 100 documents otherwise carries up to 200,000 characters of text each.
 */
export function withVisibleTextCut<T extends { visible_text: string | null }>(summary: T, chars: number): T & { visible_text_truncated: boolean } {
  const text = summary.visible_text;
  if (text === null || text.length <= chars) return { ...summary, visible_text_truncated: false };
  // Never half of a surrogate pair.
  const end = chars > 0 && /[\uD800-\uDBFF]/.test(text[chars - 1]!) ? chars - 1 : chars;
  return { ...summary, visible_text: text.slice(0, end), visible_text_truncated: true };
}

export async function fileDetail(kinds: MediaKinds, row: FileRow, urls: FileUrls) {
  const { view } = kinds.of(row);
  return { ...commonFields(row), ...(await view.summary(row, urls)), ...(await view.detail(row, urls)) };
}
