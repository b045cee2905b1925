/**
 * A photo's or video's facts from its file (`camera` and `location` of GET /files/{id}): camera,
 * lens, exposure, when it was taken in its own time zone, the place's name and a small map.
 */
import { Lazy } from "./lazy.tsx";

type Camera = {
  make: string | null;
  model: string | null;
  lens: string | null;
  focal_length_mm: number | null;
  focal_length_35mm: number | null;
  f_number: number | null;
  exposure_time_seconds: number | null;
  iso: number | null;
  taken_at: string | null;
  taken_at_offset: string | null;
};
type Location = { latitude: number; longitude: number; altitude_m: number | null; city: string | null; region: string | null; country: string | null };

/** "1/125 s" under a second, "2.5 s" above. */
function shutter(seconds: number): string {
  return seconds >= 1 ? `${Math.round(seconds * 10) / 10} s` : `1/${Math.round(1 / seconds)} s`;
}

export function exposureOf(c: Camera): string | null {
  const parts = [
    c.f_number ? `f/${c.f_number}` : null,
    c.exposure_time_seconds ? shutter(c.exposure_time_seconds) : null,
    c.iso ? `ISO ${c.iso}` : null,
    c.focal_length_mm ? `${c.focal_length_mm} mm${c.focal_length_35mm ? ` (${c.focal_length_35mm} mm in 35 mm terms)` : ""}` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : null;
}

/**
 * When it was taken as the clock where it was taken showed it: `taken_at` is UTC, its offset the
 * photo's own; without one, the time as the photo wrote it (read as UTC by the server).
 */
export function takenOf(c: Camera): string | null {
  if (!c.taken_at) return null;
  const match = c.taken_at_offset ? /^([+-])(\d{2}):(\d{2})$/.exec(c.taken_at_offset) : null;
  const minutes = match ? (match[1] === "-" ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
  const local = new Date(Date.parse(c.taken_at) + minutes * 60_000);
  const text = local.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
  return c.taken_at_offset ? `${text} (UTC${c.taken_at_offset})` : text;
}

export function placeName(l: Location): string | null {
  return [l.city, l.region, l.country].filter(Boolean).join(", ") || null;
}

export function PhotoInfo({ camera, location }: { camera: Camera | null; location: Location | null }) {
  if (!camera && !location) return null;
  const device = camera ? [camera.make, camera.model].filter(Boolean).join(" ") : "";
  const exposure = camera ? exposureOf(camera) : null;
  const taken = camera ? takenOf(camera) : null;
  const place = location ? placeName(location) : null;
  const coordinates = location ? `${location.latitude.toFixed(5)}, ${location.longitude.toFixed(5)}${location.altitude_m != null ? ` · ${Math.round(location.altitude_m)} m` : ""}` : null;
  return (
    <section class="photo-info" aria-labelledby="photo-info-title">
      <h2 id="photo-info-title">Info</h2>
      <div class="photo-info-body">
        <dl>
          {device ? (<><dt>Camera</dt><dd>{device}</dd></>) : null}
          {camera?.lens ? (<><dt>Lens</dt><dd>{camera.lens}</dd></>) : null}
          {exposure ? (<><dt>Exposure</dt><dd>{exposure}</dd></>) : null}
          {taken ? (<><dt>Taken</dt><dd>{taken}</dd></>) : null}
          {location ? (<><dt>Place</dt><dd>{place ?? "No named place nearby"}</dd><dt>Coordinates</dt><dd>{coordinates}</dd></>) : null}
        </dl>
        {location ? (
          <Lazy
            load={() => import("./mini-map.tsx")}
            render={(m) => <m.MiniMap latitude={location.latitude} longitude={location.longitude} label={place ?? coordinates!} />}
            fallback={<div class="mini-map" aria-hidden="true" />}
          />
        ) : null}
      </div>
      {place ? <p class="hint attribution">Place names: GeoNames (CC BY 4.0); map: Natural Earth (public domain).</p> : null}
    </section>
  );
}
