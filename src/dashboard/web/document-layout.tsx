/**
 * A document's pages in a viewer: each page drawn as a sheet at the chosen zoom, its text laid
 * over it in place (transparent, so it can be selected and copied over a PDF's picture), and the
 * digitization's element boxes (headings, paragraphs, tables, lists, figures...) shown on demand
 * with a legend of their colours instead of labels printed over the text. A PDF's sheet shows
 * the page itself and takes its proportions: the server draws a page on its first request, so a
 * sheet asks for its picture's signed URL (GET .../digitization/pages/{n}/image?redirect=false:
 * an <img> could not carry the key a dashboard signed in with) only once it nears the viewport,
 * at a width fitting the zoom. Other documents' pages are logical (cut from their text), so
 * their sheets stay blank under the text. The chunks search works on follow.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api.ts";
import { Markdown } from "./markdown.tsx";

type Element = { type: string; content: string; /** Normalized 0-1 from the page's top left. */
  bounding_box: { x: number; y: number; w: number; h: number }; metadata?: Record<string, unknown> };
type Page = { page_number: number; status: string; ocr: boolean; elements: Element[]; error_message: string | null };

/** Sheet widths in CSS pixels at zoom 1, the steps of the zoom buttons, and the pictures' width limit. */
const BASE_WIDTH = 420;
const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];
const MAX_PICTURE_WIDTH = 2048;

/** The colours and names the legend shows; an element type not listed here is drawn in the neutral colour. */
export const ELEMENT_NAMES: Record<string, string> = {
  heading: "Heading",
  paragraph: "Paragraph",
  list: "List",
  table: "Table",
  figure: "Figure",
  key_value: "Key and value",
  caption: "Caption",
};

/**
 * A font size at which `chars` characters, wrapped, about fill a box of `width` x `height` px
 * (a character ~0.5 em wide, lines 1.15 em apart): the selectable text then covers the words of
 * the picture below it closely enough to select by dragging over them.
 */
function fittedFontSize(chars: number, width: number, height: number): number {
  if (chars === 0 || width <= 0 || height <= 0) return 10;
  const size = Math.sqrt((width * height) / (chars * 0.5 * 1.15));
  return Math.max(4, Math.min(size, height / 1.15));
}

function Sheet({ id, page, pictured, width, showElements }: { id: string; page: Page; pictured: boolean; width: number; showElements: boolean }) {
  const sheet = useRef<HTMLDivElement>(null);
  const [src, setSrc] = useState<string | null>(null);
  // The page's own proportions once its picture is known (until then the sheet is A4-shaped).
  const [ratio, setRatio] = useState<number>(1.414);
  const [broken, setBroken] = useState(false);
  // The picture's width follows the zoom in steps, sharp on high-density screens, never past the server's limit.
  const pictureWidth = Math.min(MAX_PICTURE_WIDTH, Math.ceil((width * Math.min(2, devicePixelRatio || 1)) / 240) * 240);
  useEffect(() => {
    const element = sheet.current;
    if (!pictured || !element) return;
    let stopped = false;
    const observer = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        observer.disconnect();
        api<{ url: string; width: number; height: number }>(`/files/${id}/digitization/pages/${page.page_number}/image?width=${pictureWidth}&redirect=false`).then(
          (image) => {
            if (stopped) return;
            setRatio(image.height / image.width);
            setSrc(image.url);
          },
          // A page the server cannot draw (past its limits) keeps the blank sheet and its text.
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
  }, [id, page.page_number, pictured, pictureWidth]);
  const height = width * ratio;
  return (
    <div ref={sheet} class="sheet" style={{ width: `${width}px`, height: `${height}px` }}>
      {src && !broken ? <img class="page-image" src={src} alt={`Page ${page.page_number} as printed`} loading="lazy" decoding="async" onError={() => setBroken(true)} /> : null}
      {showElements
        ? page.elements.map((e, i) => (
            <span
              key={i}
              class={`element ${e.type}`}
              data-type={e.type}
              title={`${ELEMENT_NAMES[e.type] ?? e.type}: ${e.content.slice(0, 200)}`}
              style={{ left: `${e.bounding_box.x * 100}%`, top: `${e.bounding_box.y * 100}%`, width: `${e.bounding_box.w * 100}%`, height: `${e.bounding_box.h * 100}%` }}
            />
          ))
        : null}
      {/* The text, where the page's picture shows it, transparent and selectable; a logical page (no picture) has its text drawn above instead. */}
      {pictured ? (
      <div class={`text-layer ${src && !broken ? "over-picture" : ""}`} aria-label={`Text of page ${page.page_number}`}>
        {page.elements
          .filter((e) => e.type !== "figure" && e.content.trim())
          .map((e, i) => {
            const boxWidth = e.bounding_box.w * width;
            const boxHeight = e.bounding_box.h * height;
            const text = e.content.replace(/^[-*] |^\d+\. /gm, "").replace(/\|/g, " ");
            return (
              <span
                key={i}
                style={{
                  left: `${e.bounding_box.x * 100}%`, top: `${e.bounding_box.y * 100}%`, width: `${e.bounding_box.w * 100}%`, height: `${e.bounding_box.h * 100}%`,
                  fontSize: `${fittedFontSize(text.length, boxWidth, boxHeight)}px`,
                }}
              >
                {text}
              </span>
            );
          })}
      </div>
      ) : null}
    </div>
  );
}

/**
 * The document's text as Markdown, from its typed elements: headings with their level, lists and
 * tables as the reader wrote them (Markdown already), figures left out. The extracted text alone
 * has lost its headings' marks.
 */
export function elementsMarkdown(pages: Page[]): string {
  const blocks: string[] = [];
  for (const page of pages) {
    for (const e of page.elements) {
      const text = e.content.trim();
      if (!text || e.type === "figure") continue;
      if (e.type === "heading") {
        const level = Math.min(6, Math.max(1, Number(e.metadata?.level) || 2));
        blocks.push(`${"#".repeat(level)} ${text.replace(/\s+/g, " ")}`);
      } else blocks.push(text);
    }
  }
  return blocks.join("\n\n");
}

/** `pictured`: the document is a PDF, whose pages the server can draw. `name` labels its text. */
export function DocumentLayout({ id, pictured, name, fallbackText }: { id: string; pictured: boolean; name: string; fallbackText: string | null }) {
  const [pages, setPages] = useState<Page[] | null>(null);
  const [chunks, setChunks] = useState<{ chunk_id: string; chunk_index: number; content: string; page_numbers: number[] }[]>([]);
  const [zoom, setZoom] = useState(1);
  const [showElements, setShowElements] = useState(false);
  const [room, setRoom] = useState(BASE_WIDTH);
  const frame = useRef<HTMLDivElement>(null);
  useEffect(() => {
    api(`/files/${id}/digitization`).then((d) => setPages(d.pages), () => setPages([]));
    api(`/files/${id}/chunks`).then((c) => setChunks(c.chunks), () => setChunks([]));
  }, [id]);
  // "Fit" and the first view use the width the viewer has (a phone's is narrower than a sheet).
  useEffect(() => {
    const measure = () => frame.current && setRoom(frame.current.clientWidth);
    measure();
    const observer = new ResizeObserver(measure);
    if (frame.current) observer.observe(frame.current);
    return () => observer.disconnect();
  }, [pages !== null]);
  if (!pages) return null;
  const width = Math.round(Math.min(BASE_WIDTH, room) * zoom);
  const counts = new Map<string, number>();
  for (const page of pages) for (const e of page.elements) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
  const step = (direction: 1 | -1) => {
    const index = ZOOMS.findIndex((z) => z >= zoom - 1e-9);
    setZoom(ZOOMS[Math.max(0, Math.min(ZOOMS.length - 1, (index < 0 ? ZOOMS.length - 1 : index) + direction))]!);
  };
  const text = elementsMarkdown(pages) || fallbackText;
  return (
    <>
    {text ? (
      <section aria-labelledby="text-title">
        <h2 id="text-title">Text</h2>
        <Markdown text={text.slice(0, 200_000)} label={`Text of ${name}`} />
      </section>
    ) : null}
    <section class="document-viewer" aria-labelledby="pages-title">
      <h2 id="pages-title">Pages ({pages.length})</h2>
      <div class="viewer-tools" role="toolbar" aria-label="Page view">
        <button type="button" class="secondary" onClick={() => step(-1)} disabled={zoom <= ZOOMS[0]!} aria-label="Zoom out">−</button>
        <output aria-live="polite" aria-label="Zoom">{Math.round(zoom * 100)} %</output>
        <button type="button" class="secondary" onClick={() => step(1)} disabled={zoom >= ZOOMS[ZOOMS.length - 1]!} aria-label="Zoom in">+</button>
        <button type="button" class="secondary" onClick={() => setZoom(Math.max(0.25, room / Math.min(BASE_WIDTH, room)))}>Fit width</button>
        <label class="inline">
          <input type="checkbox" checked={showElements} onChange={() => setShowElements(!showElements)} /> Show element boxes
        </label>
      </div>
      {showElements ? (
        <ul class="legend" aria-label="Element boxes">
          {[...counts.entries()].map(([type, n]) => (
            <li key={type}>
              <span class={`swatch element ${type}`} aria-hidden="true" /> {ELEMENT_NAMES[type] ?? type} ({n})
            </li>
          ))}
        </ul>
      ) : null}
      <div class="sheets" ref={frame}>
        {pages.slice(0, 50).map((page) => (
          <figure key={page.page_number} class="sheet-frame">
            <Sheet id={id} page={page} pictured={pictured} width={width} showElements={showElements} />
            <figcaption>
              Page {page.page_number}
              {page.ocr ? " (read by OCR)" : ""}
              {page.status === "failed" ? ` — failed: ${page.error_message}` : ""}
            </figcaption>
          </figure>
        ))}
      </div>
      {pages.length > 50 ? <p class="hint">The first 50 pages are shown; the whole text is above.</p> : null}
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
    </>
  );
}
