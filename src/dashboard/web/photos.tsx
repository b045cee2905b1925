/**
 * Photos by when they were taken: one section per month (GET /files/timeline), newest first,
 * each under its date header, its pictures loaded as the section nears the viewport (GET
 * /files?taken_from=&taken_to= of the month's bounds) and drawn only while it is near; a
 * scrubber of years and months beside it jumps to a month. Months are UTC months of
 * content_created_at, as the API counts them.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import { BlurhashImage } from "./blurhash-image.tsx";

type Bucket = { key: string; count: number; start: string; end: string };
type Photo = { id: string; filename: string; title: string | null; thumbnail_url?: string | null; blur_hash?: string | null };

/** Most photos a month shows (the API's page limit); the library lists the rest. */
const MONTH_PAGE = 100;

function monthName(key: string): string {
  const [y, m] = key.split("-").map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1, 1)).toLocaleDateString(undefined, { month: "long", year: "numeric", timeZone: "UTC" });
}

/** How the month grids are laid out at the timeline's width: the same for every month, so a month's height is known before its pictures are. */
type Layout = { columns: number; cell: number; gap: number };

function layoutFor(width: number): Layout {
  const gap = width <= 700 ? 2 : 4;
  const columns = width <= 700 ? 3 : Math.max(1, Math.floor((width + gap) / ((width >= 2400 ? 200 : 150) + gap)));
  return { columns, cell: (width - (columns - 1) * gap) / columns, gap };
}

/** The height of a grid of `count` pictures. */
const gridHeight = (count: number, l: Layout) => {
  const rows = Math.ceil(count / l.columns);
  return rows ? rows * l.cell + (rows - 1) * l.gap : 0;
};

/**
 * A month: its header, and its pictures while it is within a screen of the viewport (asked for
 * the first time it comes near, kept, and drawn again when it comes back), so however long the
 * timeline, the page holds the pictures of a few months. Its grid has its final height from the
 * start: nothing moves as months load, and a jump from the scrubber lands where it aimed.
 */
function Month({ bucket, layout }: { bucket: Bucket; layout: Layout }) {
  const box = useRef<HTMLElement>(null);
  const [photos, setPhotos] = useState<Photo[] | null>(null);
  const [near, setNear] = useState(false);
  /** The month's request while it is in flight: abandoned if the month leaves before it is answered, so a fast scroll leaves no queue of months nobody looks at. */
  const pending = useRef<AbortController | null>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    let loaded = false;
    const observer = new IntersectionObserver(
      (entries) => {
        const now = entries.some((e) => e.isIntersecting);
        setNear(now);
        if (!now) {
          pending.current?.abort();
          pending.current = null;
          return;
        }
        if (loaded || pending.current) return;
        const request = (pending.current = new AbortController());
        const query = new URLSearchParams({ media_types: "image", taken_from: bucket.start, taken_to: bucket.end, sort_by: "content_created_at", sort_order: "desc", limit: String(MONTH_PAGE), visible_text_chars: "0" });
        api<{ items: Photo[] }>(`/files?${query}`, { signal: request.signal }).then(
          (r) => {
            loaded = true;
            setPhotos(r.items);
          },
          () => !request.signal.aborted && ((loaded = true), setPhotos([])),
        ).finally(() => pending.current === request && (pending.current = null));
      },
      { rootMargin: "100% 0px" },
    );
    observer.observe(element);
    return () => {
      pending.current?.abort();
      observer.disconnect();
    };
  }, [bucket.key]);
  const shown = photos ? photos.length : Math.min(bucket.count, MONTH_PAGE);
  return (
    <section ref={box} class="month" id={`month-${bucket.key}`} aria-labelledby={`month-title-${bucket.key}`}>
      <h2 id={`month-title-${bucket.key}`} class="month-title">
        {monthName(bucket.key)} <span class="hint">{bucket.count} photo{bucket.count === 1 ? "" : "s"}</span>
      </h2>
      <ul
        class="photo-grid"
        style={{ height: `${gridHeight(shown, layout)}px`, gridTemplateColumns: `repeat(${layout.columns}, minmax(0, 1fr))`, gridAutoRows: `${layout.cell}px`, gap: `${layout.gap}px` }}
      >
        {near && photos
          ? photos.map((p) => (
              <li key={p.id}>
                <a href={`#/files/${p.id}`} aria-label={p.title ?? p.filename}>
                  <BlurhashImage src={p.thumbnail_url ?? null} hash={p.blur_hash ?? null} alt="" label="IMG" />
                </a>
              </li>
            ))
          : null}
      </ul>
      {photos && photos.length < bucket.count ? <p class="hint">The first {photos.length}; sort the library by "Taken" for all {bucket.count}.</p> : null}
    </section>
  );
}

export function Photos() {
  const [buckets, setBuckets] = useState<Bucket[] | null>(null);
  const [undated, setUndated] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const timelineBox = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = timelineBox.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    api("/files/timeline?media_types=image&granularity=month").then(
      (t) => {
        setBuckets(t.buckets);
        setUndated(t.undated_count);
      },
      (err) => setError(err instanceof ApiFailure ? err.message : String(err)),
    );
  }, []);
  const years = new Map<string, Bucket[]>();
  for (const b of buckets ?? []) years.set(b.key.slice(0, 4), [...(years.get(b.key.slice(0, 4)) ?? []), b]);
  return (
    <div class="photos">
      <section aria-labelledby="photos-title" class="timeline" ref={timelineBox}>
        <h1 id="photos-title" tabIndex={-1}>Photos</h1>
        {error ? <p class="error" role="alert">{error}</p> : null}
        {buckets && !buckets.length ? (
          <p class="empty-library">No photo has a date yet. Photos get theirs from their camera's EXIF data; <a href="#/upload">upload some</a>.</p>
        ) : null}
        {width ? (buckets ?? []).map((b) => <Month key={b.key} bucket={b} layout={layoutFor(width)} />) : null}
        {undated ? <p class="hint">{undated === 1 ? "1 photo without a date is" : `${undated} photos without a date are`} in the <a href="#/library">library</a>.</p> : null}
      </section>
      {buckets?.length ? (
        <nav class="scrubber" aria-label="Jump to a month">
          <ol>
            {[...years.entries()].map(([year, months]) => (
              <li key={year}>
                <a href={`#/photos`} onClick={(e) => (e.preventDefault(), document.getElementById(`month-${months[0]!.key}`)?.scrollIntoView())}>{year}</a>
                <ol>
                  {months.map((m) => (
                    <li key={m.key}>
                      <a href={`#/photos`} onClick={(e) => (e.preventDefault(), document.getElementById(`month-${m.key}`)?.scrollIntoView())} aria-label={monthName(m.key)}>
                        {monthName(m.key).split(" ")[0]!.slice(0, 3)}
                      </a>
                    </li>
                  ))}
                </ol>
              </li>
            ))}
          </ol>
        </nav>
      ) : null}
    </div>
  );
}
