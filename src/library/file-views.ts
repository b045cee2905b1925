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
import type { MediaKind, MediaKinds } from "../kinds/media-kind.ts";

/** The summaries of a page of files, in its order: each kind is asked once for its files of the page (MediaKind.view.summaries). */
export async function fileSummaries(kinds: MediaKinds, rows: FileRow[], urls: FileUrls) {
  const byKind = new Map<MediaKind, FileRow[]>();
  for (const row of rows) {
    const kind = kinds.of(row);
    const ofKind = byKind.get(kind);
    if (ofKind) ofKind.push(row);
    else byKind.set(kind, [row]);
  }
  const fields = new Map<FileRow, Record<string, unknown>>();
  await Promise.all(
    [...byKind].map(async ([kind, ofKind]) => {
      const summaries = await kind.view.summaries(ofKind, urls);
      ofKind.forEach((row, i) => fields.set(row, summaries[i]!));
    }),
  );
  return rows.map((row) => ({ ...commonFields(row), ...fields.get(row)! }));
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
  const [[summary], detail] = await Promise.all([view.summaries([row], urls), view.detail(row, urls)]);
  return { ...commonFields(row), ...summary!, ...detail };
}
