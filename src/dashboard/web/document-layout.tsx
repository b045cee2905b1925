/**
 * A document's digitization: each page drawn as a sheet with its elements' boxes (headings,
 * paragraphs, tables, lists, figures...) in place, each box labelled and explained on hover and
 * focus, beside the list of chunks search works on. A PDF's sheet shows the page itself under
 * the boxes and takes the page's proportions: the server draws a page on its first request, so a
 * sheet asks for its picture's signed URL (GET .../digitization/pages/{n}/image?redirect=false:
 * an <img> could not carry the key a dashboard signed in with) only once it nears the viewport.
 * Other documents' pages are logical (cut from their text), so their sheets stay blank.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api.ts";

type Element = { type: string; content: string; /** Normalized 0-1 from the page's top left. */
  bounding_box: { x: number; y: number; w: number; h: number }; metadata?: Record<string, unknown> };
type Page = { page_number: number; status: string; ocr: boolean; elements: Element[]; error_message: string | null };

/** Pixels wide the page pictures are asked for: twice the sheet's CSS width, for sharp text on high-density screens. */
const PAGE_IMAGE_WIDTH = 480;

function Sheet({ id, page, pictured }: { id: string; page: Page; pictured: boolean }) {
  const sheet = useRef<HTMLDivElement>(null);
  const [src, setSrc] = useState<string | null>(null);
  // The page's own proportions once its picture is known (until then the sheet is A4-shaped).
  const [ratio, setRatio] = useState<string | null>(null);
  const [broken, setBroken] = useState(false);
  useEffect(() => {
    const element = sheet.current;
    if (!pictured || !element) return;
    let stopped = false;
    const observer = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        observer.disconnect();
        api<{ url: string; width: number; height: number }>(`/files/${id}/digitization/pages/${page.page_number}/image?width=${PAGE_IMAGE_WIDTH}&redirect=false`).then(
          (image) => {
            if (stopped) return;
            setRatio(`${image.width} / ${image.height}`);
            setSrc(image.url);
          },
          // A page the server cannot draw (past its limits) keeps the blank sheet and its boxes.
          () => !stopped && setBroken(true),
        );
      },
      { rootMargin: "300px" },
    );
    observer.observe(element);
    return () => {
      stopped = true;
      observer.disconnect();
    };
  }, [id, page.page_number, pictured]);
  return (
    <div
      ref={sheet}
      class="sheet"
      style={ratio ? { aspectRatio: ratio } : undefined}
      role="img"
      aria-label={`Page ${page.page_number}: ${page.elements.map((e) => e.type).join(", ") || "no elements"}`}
    >
      {src && !broken ? <img class="page-image" src={src} alt={`Page ${page.page_number} as printed`} loading="lazy" decoding="async" onError={() => setBroken(true)} /> : null}
      {page.elements.map((e, i) => (
        <span
          key={i}
          class={`element ${e.type}`}
          title={`${e.type}: ${e.content.slice(0, 200)}`}
          style={{ left: `${e.bounding_box.x * 100}%`, top: `${e.bounding_box.y * 100}%`, width: `${e.bounding_box.w * 100}%`, height: `${e.bounding_box.h * 100}%` }}
        >
          <span class="tag">{e.type}</span>
        </span>
      ))}
    </div>
  );
}

/** `pictured`: the document is a PDF, whose pages the server can draw. */
export function DocumentLayout({ id, pictured }: { id: string; pictured: boolean }) {
  const [pages, setPages] = useState<Page[] | null>(null);
  const [chunks, setChunks] = useState<{ chunk_id: string; chunk_index: number; content: string; page_numbers: number[] }[]>([]);
  useEffect(() => {
    api(`/files/${id}/digitization`).then((d) => setPages(d.pages), () => setPages([]));
    api(`/files/${id}/chunks`).then((c) => setChunks(c.chunks), () => setChunks([]));
  }, [id]);
  if (!pages) return null;
  return (
    <section>
      <h2>Pages ({pages.length})</h2>
      <div class="sheets">
        {pages.slice(0, 20).map((page) => (
          <figure key={page.page_number} class="sheet-frame">
            <Sheet id={id} page={page} pictured={pictured} />
            <figcaption>
              Page {page.page_number}
              {page.ocr ? " (read by OCR)" : ""}
              {page.status === "failed" ? ` — failed: ${page.error_message}` : ""}
            </figcaption>
          </figure>
        ))}
      </div>
      {pages.length > 20 ? <p class="hint">The first 20 pages are drawn.</p> : null}
      {chunks.length ? (
        <details>
          <summary>Chunks for search ({chunks.length})</summary>
          <ol class="chunks">
            {chunks.map((c) => (
              <li key={c.chunk_id}>
                <span class="hint">page {c.page_numbers.join(", ")}</span> {c.content.slice(0, 300)}
                {c.content.length > 300 ? "…" : ""}
              </li>
            ))}
          </ol>
        </details>
      ) : null}
    </section>
  );
}
