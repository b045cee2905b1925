/**
 * Map: where photos and videos were taken, on the offline world map (world-map.tsx), as the
 * clusters GET /files/locations makes for the zoom level and viewport shown (one marker per
 * 64-px cell, whatever the library's size). Drag or the arrow keys pan, the wheel, a pinch, a
 * double click or the buttons zoom; choosing a cluster lists its photos (GET /files?bbox=) with
 * the place's name, and zooms into it on demand. The map opens on the photos.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import { BlurhashImage } from "./blurhash-image.tsx";
import { ShowMore, usePagedList } from "./paged-list.tsx";
import { placeName } from "./photo-info.tsx";
import { project, unproject, WORLD, WorldOutlines } from "./world-map.tsx";

type Cluster = { latitude: number; longitude: number; count: number; bbox: [number, number, number, number]; file_ids: string[] };
type Locations = { zoom: number; clusters: Cluster[]; located_count: number; truncated: boolean };
type Photo = { id: string; filename: string; title: string | null; media_type: string; thumbnail_url?: string | null; blur_hash?: string | null };
/** Centre in world units; zoom as in Web Mercator tiles (screen pixels per world unit = 2^z). */
type View = { x: number; y: number; z: number };

const MAX_ZOOM = 18;
/** Most clusters asked for: more than a screen of 64-px cells holds. */
const CLUSTER_LIMIT = 1000;

const message = (err: unknown) => (err instanceof ApiFailure ? err.message : String(err));
const photos = (n: number) => `${n} photo${n === 1 ? "" : "s"}`;

/** The view a box (degrees) fills, with a margin, within the zoom limits. */
function fit(bbox: [number, number, number, number], size: { width: number; height: number }, maxZoom: number): View {
  const [x0, y1] = project(bbox[0], bbox[1]);
  const [x1, y0] = project(bbox[2], bbox[3]);
  const spanX = Math.max(x1 - x0, 1e-6);
  const spanY = Math.max(y1 - y0, 1e-6);
  const z = Math.min(maxZoom, Math.log2((size.width * 0.7) / spanX), Math.log2((size.height * 0.7) / spanY));
  return { x: (x0 + x1) / 2, y: (y0 + y1) / 2, z };
}

/** Keeps the view within the world and the zoom limits. */
function clamp(view: View, size: { width: number; height: number }): View {
  const minZoom = Math.log2(size.width / WORLD);
  const z = Math.max(minZoom, Math.min(MAX_ZOOM, view.z));
  const s = 2 ** z;
  const halfW = size.width / s / 2;
  const halfH = size.height / s / 2;
  const x = halfW >= WORLD / 2 ? WORLD / 2 : Math.max(halfW, Math.min(WORLD - halfW, view.x));
  const y = halfH >= WORLD / 2 ? WORLD / 2 : Math.max(halfH, Math.min(WORLD - halfH, view.y));
  return { x, y, z };
}

/** The viewport as west,south,east,north for GET /files/locations; null when it shows the whole world. */
function viewportBox(view: View, size: { width: number; height: number }): string | null {
  const s = 2 ** view.z;
  const [west, north] = unproject(Math.max(0, view.x - size.width / s / 2), Math.max(0, view.y - size.height / s / 2));
  const [east, south] = unproject(Math.min(WORLD, view.x + size.width / s / 2), Math.min(WORLD, view.y + size.height / s / 2));
  if (west <= -179.9 && east >= 179.9 && north >= 85 && south <= -85) return null;
  const r = (n: number) => Math.round(n * 1e5) / 1e5;
  return [r(Math.max(-180, west)), r(Math.max(-90, south)), r(Math.min(180, east)), r(Math.min(90, north))].join(",");
}


/** The equator's length in metres (Web Mercator's sphere). */
const EQUATOR_M = 40_075_016.686;

/** A round distance (1, 2 or 5 × 10^n m) at most `maxPx` long at the view's centre, and its length in pixels. */
export function scaleBar(view: View, maxPx = 120): { label: string; px: number } {
  const [, latitude] = unproject(view.x, view.y);
  const metresPerPx = (EQUATOR_M * Math.cos((latitude * Math.PI) / 180)) / (WORLD * 2 ** view.z);
  const most = metresPerPx * maxPx;
  const power = 10 ** Math.floor(Math.log10(most));
  const metres = [5, 2, 1].map((m) => m * power).find((m) => m <= most) ?? power;
  return { label: metres >= 1000 ? `${metres / 1000} km` : `${metres} m`, px: metres / metresPerPx };
}

function ClusterPhotos({ cluster, onZoom, onClose }: { cluster: Cluster; onZoom: () => void; onClose: () => void }) {
  const [w, s, e, n] = cluster.bbox;
  const list = usePagedList<Photo>(`/files?bbox=${[w, s, e, n].join(",")}&has_location=true&sort_by=content_created_at&sort_order=desc&visible_text_chars=0`, 48);
  const [place, setPlace] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    setPlace(null);
    const first = cluster.file_ids[0];
    if (first) api(`/files/${first}`).then((f) => setPlace(f.location ? placeName(f.location) : null), () => null);
    // The list opens under the map: on a phone below the screen. Bring its heading into view and focus.
    const box = heading.current?.getBoundingClientRect();
    if (box && box.bottom > innerHeight) heading.current!.scrollIntoView({ block: "center" });
    heading.current?.focus({ preventScroll: true });
  }, [cluster.file_ids[0]]);
  return (
    <section class="cluster-photos" aria-labelledby="cluster-title">
      <div class="row wrap">
        <h2 id="cluster-title" tabIndex={-1} ref={heading}>
          {photos(list.loaded ? list.total : cluster.count)}
          {place ? ` near ${place}` : " here"}
        </h2>
        <button type="button" class="secondary" onClick={onZoom}>
          Zoom in here
        </button>
        <button type="button" class="link" onClick={onClose}>
          Close
        </button>
      </div>
      {list.error ? <p class="error" role="alert">{list.error}</p> : null}
      <ul class="photo-grid">
        {list.items.map((p) => (
          <li key={p.id}>
            <a href={`#/files/${p.id}`} aria-label={p.title ?? p.filename}>
              <BlurhashImage src={p.thumbnail_url ?? null} hash={p.blur_hash ?? null} alt="" label={p.media_type === "video" ? "VID" : "IMG"} />
            </a>
          </li>
        ))}
      </ul>
      <ShowMore list={list} label="Show more" />
    </section>
  );
}

export function MapPage({ start }: { start: { latitude: number; longitude: number; zoom: number } | null }) {
  const box = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  const [view, setView] = useState<View | null>(null);
  const [data, setData] = useState<Locations | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<Cluster | null>(null);
  /** Located files in the whole library (null until known; only asked for when the map opens on the photos). */
  const [located, setLocated] = useState<number | null>(null);
  const drag = useRef<{ pointers: Map<number, { x: number; y: number }>; moved: number; pinch: number | null }>({ pointers: new Map(), moved: 0, pinch: null });
  const asked = useRef(0);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setSize({ width: element.clientWidth, height: element.clientHeight }));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // The first view: the place asked for, or the photos' extent, or the whole world.
  useEffect(() => {
    if (!size || view) return;
    if (start) {
      const [x, y] = project(start.longitude, start.latitude);
      setView(clamp({ x, y, z: start.zoom }, size));
      return;
    }
    api<Locations>(`/files/locations?zoom=0&limit=${CLUSTER_LIMIT}`).then(
      (all) => {
        setLocated(all.located_count);
        if (!all.clusters.length) return setView(clamp({ x: WORLD / 2, y: WORLD / 2, z: 0 }, size));
        const bbox: [number, number, number, number] = [
          Math.min(...all.clusters.map((c) => c.bbox[0])),
          Math.min(...all.clusters.map((c) => c.bbox[1])),
          Math.max(...all.clusters.map((c) => c.bbox[2])),
          Math.max(...all.clusters.map((c) => c.bbox[3])),
        ];
        setView(clamp(fit(bbox, size, 12), size));
      },
      (err) => {
        setError(message(err));
        setView(clamp({ x: WORLD / 2, y: WORLD / 2, z: 0 }, size));
      },
    );
  }, [size]);

  // The clusters of what is shown, asked for once the view has settled.
  useEffect(() => {
    if (!size || !view) return;
    const timer = setTimeout(() => {
      const ask = ++asked.current;
      const bbox = viewportBox(view, size);
      const zoom = Math.max(0, Math.min(22, Math.round(view.z)));
      api<Locations>(`/files/locations?zoom=${zoom}&limit=${CLUSTER_LIMIT}${bbox ? `&bbox=${bbox}` : ""}`).then(
        (d) => {
          if (ask !== asked.current) return;
          setData(d);
          setError(null);
        },
        (err) => ask === asked.current && setError(message(err)),
      );
    }, 180);
    return () => clearTimeout(timer);
  }, [view, size]);

  const move = (next: (v: View) => View) => size && setView((v) => (v ? clamp(next(v), size) : v));
  /** Zooms by `dz` keeping the world point under (px, py) (screen, from the map's top left) in place. */
  const zoomAt = (dz: number, px?: number, py?: number) =>
    move((v) => {
      if (!size) return v;
      const ox = (px ?? size.width / 2) - size.width / 2;
      const oy = (py ?? size.height / 2) - size.height / 2;
      const s = 2 ** v.z;
      const s2 = 2 ** Math.max(Math.log2(size.width / WORLD), Math.min(MAX_ZOOM, v.z + dz));
      return { x: v.x + ox / s - ox / s2, y: v.y + oy / s - oy / s2, z: v.z + dz };
    });

  const s = view ? 2 ** view.z : 1;
  const viewBox = view && size ? `${view.x - size.width / s / 2} ${view.y - size.height / s / 2} ${size.width / s} ${size.height / s}` : `0 0 ${WORLD} ${WORLD}`;
  const local = (e: { clientX: number; clientY: number }) => {
    const r = box.current!.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };

  return (
    <section aria-labelledby="map-title" class="map-page">
      <h1 id="map-title" tabIndex={-1}>Map</h1>
      <p class="hint">Where your photos and videos were taken. Drag to move, scroll or pinch to zoom; choose a circle to see its photos.</p>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <div class="map-tools row wrap">
        <button type="button" class="secondary" aria-label="Zoom in" onClick={() => zoomAt(1)}>
          +
        </button>
        <button type="button" class="secondary" aria-label="Zoom out" onClick={() => zoomAt(-1)}>
          −
        </button>
        <button type="button" class="secondary" onClick={() => size && setView(clamp({ x: WORLD / 2, y: WORLD / 2, z: 0 }, size))}>
          Whole world
        </button>
        <p class="count" aria-live="polite">
          {data ? (data.located_count ? `${photos(data.located_count)} with a location in view` : "No photo with a location in view") : "Loading…"}
          {data?.truncated ? " (the largest groups shown)" : ""}
        </p>
      </div>
      <div class="map-frame" ref={box}>
        <svg
          class="world-map"
          viewBox={viewBox}
          preserveAspectRatio="xMidYMid meet"
          role="group"
          aria-label="World map of where photos were taken; arrow keys move it, plus and minus zoom"
          tabindex={0}
          onKeyDown={(e) => {
            const step = size ? (Math.min(size.width, size.height) / 4) / s : 0;
            const moves: Record<string, [number, number]> = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
            if (moves[e.key]) {
              e.preventDefault();
              const [dx, dy] = moves[e.key]!;
              move((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));
            } else if (e.key === "+" || e.key === "=") zoomAt(1);
            else if (e.key === "-") zoomAt(-1);
          }}
          onWheel={(e) => {
            e.preventDefault();
            const p = local(e);
            zoomAt(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.002), p.x, p.y);
          }}
          onDblClick={(e) => {
            const p = local(e);
            zoomAt(1, p.x, p.y);
          }}
          onPointerDown={(e) => {
            drag.current.pointers.set(e.pointerId, local(e));
            drag.current.moved = 0;
            drag.current.pinch = null;
          }}
          onPointerMove={(e) => {
            const d = drag.current;
            const before = d.pointers.get(e.pointerId);
            if (!before) return;
            const now = local(e);
            d.pointers.set(e.pointerId, now);
            if (d.pointers.size === 2) {
              const [a, b] = [...d.pointers.values()] as [{ x: number; y: number }, { x: number; y: number }];
              const distance = Math.hypot(a.x - b.x, a.y - b.y);
              if (d.pinch) zoomAt(Math.log2(distance / d.pinch), (a.x + b.x) / 2, (a.y + b.y) / 2);
              d.pinch = distance;
              d.moved += 10;
              return;
            }
            const dx = now.x - before.x;
            const dy = now.y - before.y;
            d.moved += Math.abs(dx) + Math.abs(dy);
            // Captured only once it drags: a click on a circle stays the circle's.
            const svg = e.currentTarget as SVGSVGElement;
            if (d.moved > 3 && !svg.hasPointerCapture(e.pointerId)) svg.setPointerCapture(e.pointerId);
            move((v) => ({ ...v, x: v.x - dx / 2 ** v.z, y: v.y - dy / 2 ** v.z }));
          }}
          onPointerUp={(e) => {
            drag.current.pointers.delete(e.pointerId);
            drag.current.pinch = null;
          }}
          onPointerCancel={(e) => drag.current.pointers.delete(e.pointerId)}
        >
          <WorldOutlines scale={s} />
          {(data?.clusters ?? []).map((c) => {
            const [x, y] = project(c.longitude, c.latitude);
            const radius = (c.count === 1 ? 9 : 13 + 4 * Math.log10(c.count)) / s;
            const label = `${photos(c.count)} at ${c.latitude.toFixed(3)}, ${c.longitude.toFixed(3)}`;
            const open = () => drag.current.moved < 6 && setChosen(c);
            return (
              <g
                key={`${c.latitude},${c.longitude}`}
                class={`cluster${chosen && chosen.file_ids[0] === c.file_ids[0] ? " chosen" : ""}`}
                transform={`translate(${x} ${y})`}
                role="button"
                tabindex={0}
                aria-label={label}
                onClick={open}
                onKeyDown={(e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), setChosen(c))}
              >
                <circle r={radius} stroke-width={2 / s} />
                {c.count > 1 ? (
                  <text font-size={12 / s} dy={4 / s} text-anchor="middle" aria-hidden="true">
                    {c.count > 999 ? `${Math.round(c.count / 100) / 10}k` : c.count}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
        {view && view.z > 7 ? <p class="map-note">This offline map draws countries only: no streets or towns up close.</p> : null}
        {view ? (
          <div class="map-scale" aria-label="Scale">
            <span style={{ width: `${scaleBar(view).px}px` }} />
            {scaleBar(view).label}
          </div>
        ) : null}
      </div>
      <p class="hint attribution">Map: Natural Earth 1:110m (public domain), drawn here without a tile server. Place names: GeoNames (CC BY 4.0).</p>
      {located === 0 ? (
        <div class="empty-library">
          <h2>No photo has a location yet</h2>
          <p>
            Photos and videos appear here when the camera or phone recorded where they were taken (GPS in the photo's EXIF data, or a video's location tag). Phones do so
            when location is on for the camera.
          </p>
          <p>
            <a href="#/upload">Upload photos</a>, or see them by date in <a href="#/photos">Photos</a>.
          </p>
        </div>
      ) : null}
      {chosen ? (
        <ClusterPhotos
          key={`${chosen.latitude},${chosen.longitude}`}
          cluster={chosen}
          onClose={() => setChosen(null)}
          onZoom={() => {
            if (!size) return;
            const [w, so, e, n] = chosen.bbox;
            const single = w === e && so === n;
            if (single) {
              const [x, y] = project(w, so);
              setView((v) => clamp({ x, y, z: (v?.z ?? 0) + 3 }, size));
            } else setView(clamp(fit(chosen.bbox, size, MAX_ZOOM), size));
            setChosen(null);
          }}
        />
      ) : null}
    </section>
  );
}
